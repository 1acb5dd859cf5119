#!/bin/bash
check_path_valid() { [ -n "$1" ] && [ -d "$1" ]; }
check_file_valid() { [ -n "$1" ] && [ -f "$1" ]; }
check_python_package_is_install() { $1 -c "import $2" >/dev/null 2>&1; }
