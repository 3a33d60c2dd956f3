# Stand-in for python:3.11-slim: Debian's Python 3.11 with pip.
ARG ROOTFS
FROM ${ROOTFS}
ENV LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
CMD ["python3"]
