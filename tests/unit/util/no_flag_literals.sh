#!/bin/sh
# The library names its own fields, never a command-line flag: no string
# literal in src/, include/ or kernels/ holds "--" followed by a letter (only
# cli/ knows flags, cli/flag_names.cpp). A whole literal is matched, from its
# opening quote to its closing one, so "--level" as code and "--" inside a
# comment without quotes do not count. Prints each offending line; exit 1 if any.
# One file is exempt: src/export/megatron_export.cpp writes Megatron-LM's own
# arguments (--num-layers ...), which are its output, not smelt-match flags.
root=${1:?usage: no_flag_literals.sh SOURCE_DIR}
found=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.cu' --include='*.cuh' \
  '"([^"\\]|\\.)*--[A-Za-z]([^"\\]|\\.)*"' "$root/src" "$root/include" "$root/kernels" |
  grep -v "^$root/src/export/megatron_export.cpp:")
if [ -n "$found" ]; then
  echo "library string literals that name a command-line flag (name the API field instead):"
  echo "$found"
  exit 1
fi
echo "no flag names in library string literals"
