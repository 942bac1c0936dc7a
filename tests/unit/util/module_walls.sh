#!/bin/sh
# The walls between the modules (docs/architecture.md), as the includes keep them:
#  - a file in src/M/ includes "O/..." (a private header of module O) only when
#    M's CMake names O among the modules it uses (smelt_add_module's USES, listed
#    in MODULE_GRAPH, one "module: used modules" line each, written by
#    src/CMakeLists.txt);
#  - the outer rooms (cli/, python/src/, kernels/) include public headers
#    ("smelt/...") and their own, never a private header of the library (a file
#    under src/); kernels/ alone may include util's three shared headers
#    (src/util/internal/), through the target its CMake links by name.
# Prints each offending include; exit 1 if any.
root=${1:?usage: module_walls.sh SOURCE_DIR MODULE_GRAPH}
graph=${2:?usage: module_walls.sh SOURCE_DIR MODULE_GRAPH}
src=$root/src
internal=$src/util/internal
[ -s "$graph" ] || { echo "no module graph in '$graph'"; exit 1; }
modules=$(cut -d: -f1 "$graph" | tr '\n' ' ')

# The include paths of a file, one a line, quoted or angle-bracketed.
includes() {
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^">]*\)[">].*/\1/p' "$1"
}

sources() {
  find "$@" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) | sort
}

found=$(
  for m in $modules; do
    uses=$(sed -n "s/^$m:[[:space:]]*//p" "$graph")
    for f in $(sources "$src/$m"); do
      for inc in $(includes "$f"); do
        other=${inc%%/*}
        [ "$other" = "$inc" ] && continue
        [ "$other" = "$m" ] && continue
        case " $modules " in *" $other "*) ;; *) continue ;; esac
        case " $uses " in *" $other "*) continue ;; esac
        echo "${f#"$root"/}: includes \"$inc\": src/$m/CMakeLists.txt does not name module $other (uses: ${uses:-none})"
      done
    done
  done

  for room in cli python/src kernels; do
    allow_internal=no
    if [ "$room" = kernels ] && grep -q 'smelt_util_internal' "$root/kernels/CMakeLists.txt"; then
      allow_internal=yes
    fi
    for f in $(sources "$root/$room"); do
      dir=$(dirname "$f")
      for inc in $(includes "$f"); do
        case "$inc" in smelt/*) continue ;; esac
        [ -f "$dir/$inc" ] || [ -f "$root/$room/$inc" ] && continue  # the room's own header
        [ "$allow_internal" = yes ] && [ -f "$internal/$inc" ] && continue
        if [ -f "$src/$inc" ] || [ -f "$internal/$inc" ]; then
          echo "${f#"$root"/}: includes \"$inc\", a private header of the library: $room/ uses the public headers (smelt/...)"
        fi
      done
    done
  done
)
if [ -n "$found" ]; then
  echo "includes that cross a wall between modules (docs/architecture.md):"
  echo "$found"
  exit 1
fi
echo "module walls hold: $(wc -l <"$graph") modules, each including only the modules its CMake names; cli/, python/src/ and kernels/ include public headers"
