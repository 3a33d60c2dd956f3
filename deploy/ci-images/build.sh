#!/usr/bin/env bash
# CI stand-ins for the base images that Dockerfile and docker-compose.yml name
# (python:3.11-slim, redis:7-alpine, nginx:1.27-alpine), built from Debian's packages
# because CI reaches no image registry. Elsewhere `docker build` pulls the official ones.
#
#   deploy/ci-images/build.sh CACHE_DIR      (as root; DOCKER_HOST names the engine)
#
# One Debian root filesystem (debootstrap) holds Python, Redis, nginx and wget (for the
# proxy's healthcheck, as the official nginx image has); it is kept as a tarball in
# CACHE_DIR, and each stand-in is a few lines on top of it (*.Dockerfile here).
# The images carry the recipe's hash as a label: nothing is rebuilt while it matches.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$(mkdir -p "${1:?usage: build.sh CACHE_DIR}" && cd "$1" && pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
recipe=$(cat "$here/build.sh" "$here"/*.Dockerfile | sha256sum | cut -c1-12)

declare -A tags=([python]=python:3.11-slim [redis]=redis:7-alpine [nginx]=nginx:1.27-alpine)

current() {
    docker image inspect --format '{{index .Config.Labels "mayi.ci.recipe"}}' "$1" 2>/dev/null || true
}
stale=0
for name in "${!tags[@]}"; do
    [ "$(current "${tags[$name]}")" = "$recipe" ] || stale=1
done
[ "$stale" = 1 ] || exit 0

tarball="$cache/rootfs-$recipe.tar"
if [ ! -s "$tarball" ]; then
    rm -f "$cache"/rootfs-*.tar
    rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
    trap 'rm -rf "$rootfs"' EXIT
    debootstrap --variant=minbase --include=python3,python3-pip,redis-server,nginx-light,wget \
        bookworm "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 \
        || { tail -20 "$cache/debootstrap.log"; exit 1; }
    # As in the official python image: `python` and `pip` install into the system.
    ln -sf python3 "$rootfs/usr/bin/python"
    rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
    # nginx serves only what compose mounts in conf.d (as in the official image).
    rm -f "$rootfs"/etc/nginx/sites-enabled/*
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/usr/share/doc/* \
        "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*
    tar -C "$rootfs" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
fi

docker import "$tarball" "mayi-ci-rootfs:$recipe" >/dev/null
for name in "${!tags[@]}"; do
    DOCKER_BUILDKIT=0 docker build --quiet --network none --label "mayi.ci.recipe=$recipe" \
        --build-arg "ROOTFS=mayi-ci-rootfs:$recipe" -t "${tags[$name]}" \
        -f "$here/$name.Dockerfile" "$here" >/dev/null
done
echo "built ${tags[*]} (recipe $recipe)"
