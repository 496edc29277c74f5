"""Build the loader's compiled scanner; everything else about the package lives in pyproject.toml.

The extension is optional: without a C compiler the package still installs and the loader uses its
pure-Python/pyarrow path (same tables, slower).  ``tests/test_tables_canon.py`` requires it to be built.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("mcpeval_nb.tables._canon", ["mcpeval_nb/tables/_canon.c"],
                             extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers"],
                             optional=True)])
