# Stand-in for redis:7-alpine: Debian's Redis 7 (redis-server, redis-cli), data in /data.
ARG ROOTFS
FROM ${ROOTFS}
ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
WORKDIR /data
VOLUME /data
CMD ["redis-server"]
