#!/usr/bin/env bash
# PostgreSQL with pgvector for the tests (test/helpers/pg-server.ts prefers it to the wheel it
# fetches), on Debian or Ubuntu, built to run on any x86-64 CPU. Run as root or with sudo; .ci/run
# runs it. Installs Debian's postgresql-15 and, since Debian 12 packages no pgvector, builds the
# pgvector that Debian 13 packages from Debian's own source tarball, checked against its sha256.
# pgvector's Makefile compiles with -march=native by default: a library built on a CPU with
# AVX-512 then dies with "Illegal instruction" on one without. OPTFLAGS="" builds for plain x86-64.
# Does nothing when that pgvector is already installed.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
PGVECTOR_VERSION=0.8.0
PGVECTOR_SHA256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0
PGVECTOR_URL="https://deb.debian.org/debian/pool/main/p/pgvector/pgvector_${PGVECTOR_VERSION}.orig.tar.gz"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"

installed() {
  [ -x "$PG_CONFIG" ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/vector--${PGVECTOR_VERSION}.sql" ]
}
if installed; then
  echo "pgvector ${PGVECTOR_VERSION} for PostgreSQL ${PG_MAJOR} is installed"
  exit 0
fi

packages=(postgresql-"$PG_MAJOR" postgresql-server-dev-"$PG_MAJOR" gcc libc6-dev make curl ca-certificates)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
curl -fsSL --retry 3 -o "$build/pgvector.tar.gz" "$PGVECTOR_URL"
echo "$PGVECTOR_SHA256  $build/pgvector.tar.gz" | sha256sum -c --quiet -
tar -xzf "$build/pgvector.tar.gz" -C "$build"
# with_llvm=no: no JIT bitcode, so no clang run is needed.
make -s -C "$build/pgvector-${PGVECTOR_VERSION}" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" with_llvm=no
$SUDO make -s -C "$build/pgvector-${PGVECTOR_VERSION}" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" with_llvm=no install
installed
echo "pgvector ${PGVECTOR_VERSION} for PostgreSQL ${PG_MAJOR} installed (built for any x86-64 CPU)"
