# Sourced by bundle.sh and check.sh: the libraries that stay the host's
# (glibc's own and the NVIDIA driver's) and so never go into the bundle.
# shellcheck shell=bash
is_host_library() {
    case $1 in
        linux-vdso.so* | linux-gate.so* | ld-linux*.so* | ld64.so*) return 0 ;;
        libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.*) return 0 ;;
        libmvec.so.* | libutil.so.* | libanl.so.* | libnsl.so.* | libBrokenLocale.so.*) return 0 ;;
        libthread_db.so.* | libnss_*.so.* | libcuda.so*) return 0 ;;
    esac
    return 1
}
