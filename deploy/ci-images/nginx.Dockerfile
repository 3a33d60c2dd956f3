# Stand-in for nginx:1.27-alpine: Debian's nginx, serving what /etc/nginx/conf.d holds.
ARG ROOTFS
FROM ${ROOTFS}
ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
