#!/usr/bin/env bash
# Builds the real OSU Micro-Benchmarks 7.4 C MPI binaries (point-to-point
# standard, persistent and congestion; blocking, non-blocking, neighbourhood
# and, where the MPI library is MPI-4, persistent collectives; start-up;
# one-sided, with osu_get_mbw, which OSU's Makefile leaves out; no CUDA, no
# OpenSHMEM/UPC) so that
# tests and benchmarks can run them beside ours, and prints on stdout the one
# directory holding symlinks to every osu_* binary built:
#
#   target/osu-7.4/openmpi/bin    built with mpicc / mpicxx            (default)
#   target/osu-7.4/mpich/bin      built with mpicc.mpich / mpicxx.mpich (OSU_MPI=mpich)
#
#   scripts/build-osu.sh                      # -> .../target/osu-7.4/openmpi/bin
#   OSU_MPI=mpich scripts/build-osu.sh
#   OSU_TARBALL=/elsewhere/osu-micro-benchmarks-7.4.tar.gz scripts/build-osu.sh
#   OSU_MPICC=... OSU_MPICXX=...              # other compiler wrappers
#
# Idempotent: a finished build leaves a stamp naming the tarball's checksum
# and the compilers; with the stamp and every binary present it only prints
# the directory. An interrupted or stale build is thrown away and redone.
# Concurrent callers wait for each other (flock). The build log stays in
# target/osu-7.4/<mpi>/build.log; progress goes to stderr, never stdout.
#
# The tarball defaults to ../shared/reference/ beside the repository. Nothing
# from it is ever written outside target/ (which git ignores). It is OSU's
# code: a reference for behaviour, built and run, never copied.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
tarball=${OSU_TARBALL:-$(dirname "$0")/../../shared/reference/osu-micro-benchmarks-7.4.tar.gz}
mpi=${OSU_MPI:-openmpi}

die() { echo "build-osu.sh: $*" >&2; exit 1; }

case $mpi in
  openmpi) cc=${OSU_MPICC:-mpicc} cxx=${OSU_MPICXX:-mpicxx} ;;
  mpich) cc=${OSU_MPICC:-mpicc.mpich} cxx=${OSU_MPICXX:-mpicxx.mpich} ;;
  *) die "OSU_MPI must be openmpi or mpich, not '$mpi'" ;;
esac
[ -f "$tarball" ] || die "OSU 7.4 tarball not found: $tarball (set OSU_TARBALL to its path)"
command -v "$cc" >/dev/null 2>&1 || die "MPI C compiler '$cc' not found (scripts/setup.sh installs it)"
command -v "$cxx" >/dev/null 2>&1 || die "MPI C++ compiler '$cxx' not found (scripts/setup.sh installs it)"
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")

dest=$here/target/osu-7.4/$mpi
bin=$dest/bin
# The programs built, by the OSU directory that holds them.
dirs=(c/mpi/pt2pt/standard c/mpi/pt2pt/persistent c/mpi/pt2pt/congestion c/mpi/collective/blocking
  c/mpi/collective/non_blocking c/mpi/collective/neighborhood c/mpi/startup c/mpi/one-sided)

mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9

# Programs OSU ships but its Makefiles do not build, by directory: each is
# compiled and linked as its directory's model program is (same flags, same
# util objects), so that its output can be compared with ours.
extras=(c/mpi/one-sided:osu_get_mbw:osu_get_bw)

stamp="tarball $(sha256sum "$tarball" | cut -d' ' -f1) cc $cc cxx $cxx dirs ${dirs[*]} extras ${extras[*]}"
built() {
  [ -f "$dest/.stamp" ] && [ "$(cat "$dest/.stamp")" = "$stamp" ] || return 1
  [ -x "$bin/osu_latency" ] && [ -x "$bin/osu_allreduce" ] && [ -x "$bin/osu_gather" ] && [ -x "$bin/osu_iallreduce" ] \
    && [ -x "$bin/osu_bw_fan_in" ] && [ -x "$bin/osu_init" ] && [ -x "$bin/osu_hello" ] \
    && [ -x "$bin/osu_put_latency" ] && [ -x "$bin/osu_latency_persistent" ] \
    && [ -x "$bin/osu_neighbor_allgather" ] && [ -x "$bin/osu_latency_mt" ] && [ -x "$bin/osu_get_mbw" ]
}

if ! built; then
  echo "build-osu.sh: building OSU 7.4 with $cc into $dest (a few minutes; log: $dest/build.log)" >&2
  rm -rf "$dest/src" "$bin" "$dest/.stamp"
  mkdir -p "$dest/src"
  log=$dest/build.log
  : >"$log"
  fail() { tail -n 20 "$log" >&2; die "$1 failed (full log: $log)"; }
  tar xzf "$tarball" -C "$dest/src" --strip-components=1 || die "cannot unpack $tarball"
  (
    cd "$dest/src"
    # The release ships a generated configure; no autotools run is needed.
    ./configure CC="$cc" CXX="$cxx" --disable-dependency-tracking >>"$log" 2>&1
  ) || fail "configure"
  # OSU's configure builds the persistent collectives only when the library
  # has MPI-4 (it looks for MPI_Session_init and defines _ENABLE_MPI4_):
  # MPICH 4 yes, Open MPI 4.1 no. Follow its verdict, not the library's name.
  if grep -q -- '-D_ENABLE_MPI4_=1' "$dest/src/c/mpi/pt2pt/standard/Makefile"; then
    dirs+=(c/mpi/collective/persistent)
  fi
  for d in "${dirs[@]}"; do
    make -C "$dest/src/$d" -j"$(nproc)" >>"$log" 2>&1 || fail "make in $d"
  done
  for e in "${extras[@]}"; do
    IFS=: read -r d prog model <<<"$e"
    # A rule beside the generated Makefile: the model's objects less its
    # own, and the model's link command; .c.o compiles the source.
    printf '%s\n' "$prog\$(EXEEXT): $prog.\$(OBJEXT) \$(filter-out $model.\$(OBJEXT),\$(${model}_OBJECTS))" \
      "	\$(CXXLINK) \$^ \$(${model}_LDADD) \$(LIBS)" >"$dest/src/$d/$prog.mk"
    make -C "$dest/src/$d" -f Makefile -f "$prog.mk" "$prog" >>"$log" 2>&1 || fail "make $prog in $d"
  done
  mkdir -p "$bin"
  for d in "${dirs[@]}"; do
    for f in "$dest/src/$d"/osu_*; do
      # Executables only, not sources or objects; relative links survive a moved checkout.
      case $f in *.c | *.o | *.h) continue ;; esac
      if [ -f "$f" ] && [ -x "$f" ]; then
        ln -sfn "../src/$d/$(basename "$f")" "$bin/$(basename "$f")"
      fi
    done
  done
  echo "$stamp" >"$dest/.stamp"
  built || die "build finished but binaries are missing in $bin (log: $log)"
  echo "build-osu.sh: built $(ls "$bin" | wc -l) OSU binaries" >&2
fi

echo "$bin"
