/*
 * pysandbox's file-system calls by descriptor, for dev.pysandbox.core.NativeFs.
 *
 * Java's file API cannot open with O_NONBLOCK, which is what makes an open of a FIFO or of a
 * leased file return at once instead of waiting for a writer or for the lease to break. So every
 * server-side look at a workspace goes through these few calls: each opens relative to a
 * directory descriptor with O_NOFOLLOW, and the caller checks what it got with fstat on the
 * descriptor it holds, never by path. Errors come back as -errno; nothing here throws.
 * Built by scripts/build-native.sh during `mvn package` (process-classes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "dev_pysandbox_core_files_NativeFs.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#define RETRY(expr)                                                                          \
  ({                                                                                         \
    long _r;                                                                                 \
    do {                                                                                     \
      _r = (long)(expr);                                                                     \
    } while (_r == -1 && errno == EINTR);                                                    \
    _r;                                                                                      \
  })

/* A file name from Java, NUL-terminated; names hold no NUL and no '/' (checked in Java). */
typedef struct {
  char buf[512];
} name_t;

/* Copies name into out; 0 (the caller answers -EINVAL) when it is empty, too long or not a name. */
static int get_name(JNIEnv *env, jbyteArray name, name_t *out) {
  jsize n = (*env)->GetArrayLength(env, name);
  if (n <= 0 || n >= (jsize)sizeof(out->buf)) {
    return 0;
  }
  (*env)->GetByteArrayRegion(env, name, 0, n, (jbyte *)out->buf);
  out->buf[n] = 0;
  return memchr(out->buf, 0, (size_t)n) == NULL && memchr(out->buf, '/', (size_t)n) == NULL;
}

/* Every call that takes one name starts so: the name into a local name_t called nm, or -EINVAL. */
#define NAME_OR_EINVAL(env, name, nm) \
  name_t nm;                          \
  if (!get_name(env, name, &nm)) {    \
    return -EINVAL;                   \
  }

static jint neg_errno(void) { return -errno; }

/* A call that returns a count or a descriptor, as Java gets it: the value, or -errno. */
static jint count_or_errno(long r) { return r < 0 ? neg_errno() : (jint)r; }

/* A call that returns 0 on success, as Java gets it: 0, or -errno. */
static jint zero_or_errno(long r) { return r == 0 ? 0 : neg_errno(); }

/* How a directory is opened: never through a link, never waiting (see the header). */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)

/* openat of a name in dirfd, with flags (and mode where they create). */
static jint open_name(JNIEnv *env, jint dirfd, jbyteArray name, int flags, mode_t mode) {
  NAME_OR_EINVAL(env, name, nm);
  return count_or_errno(RETRY(openat(dirfd, nm.buf, flags, mode)));
}

JNIEXPORT jintArray JNICALL Java_dev_pysandbox_core_files_NativeFs_constants(JNIEnv *env, jclass c) {
  (void)c;
  jint v[] = {ENOENT, ENOTDIR, ELOOP, EACCES, EAGAIN, ENXIO, EEXIST, ENOTEMPTY, EPERM, EISDIR,
              ENAMETOOLONG, EXDEV, EBUSY, EINVAL};
  jintArray out = (*env)->NewIntArray(env, (jsize)(sizeof v / sizeof v[0]));
  if (out != NULL) {
    (*env)->SetIntArrayRegion(env, out, 0, (jsize)(sizeof v / sizeof v[0]), v);
  }
  return out;
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_openRoot(JNIEnv *env, jclass c,
                                                                  jbyteArray path) {
  (void)c;
  jsize n = (*env)->GetArrayLength(env, path);
  if (n <= 0 || n >= 4096) {
    return -ENAMETOOLONG;
  }
  char p[4096];
  (*env)->GetByteArrayRegion(env, path, 0, n, (jbyte *)p);
  p[n] = 0;
  if (memchr(p, 0, (size_t)n) != NULL) {
    return -EINVAL;
  }
  return count_or_errno(RETRY(open(p, DIR_FLAGS)));
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_openDir(JNIEnv *env, jclass c, jint dirfd,
                                                                 jbyteArray name) {
  (void)c;
  return open_name(env, dirfd, name, DIR_FLAGS, 0);
}

/* ".." of a directory we hold: only ever used below the depth where parents stay open. */
JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_openParent(JNIEnv *env, jclass c,
                                                                    jint dirfd) {
  (void)env;
  (void)c;
  return count_or_errno(RETRY(openat(dirfd, "..", DIR_FLAGS)));
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_openFile(JNIEnv *env, jclass c,
                                                                  jint dirfd, jbyteArray name) {
  (void)c;
  return open_name(env, dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0);
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_createFile(JNIEnv *env, jclass c,
                                                                    jint dirfd, jbyteArray name,
                                                                    jint mode) {
  (void)c;
  jint fd = open_name(env, dirfd, name,
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                      (mode_t)(mode & 0777));
  if (fd < 0) {
    return fd;
  }
  /* The exact mode, whatever the umask; never setuid, setgid or sticky. */
  if (fchmod(fd, (mode_t)(mode & 0777)) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_mkdirAt(JNIEnv *env, jclass c, jint dirfd,
                                                                 jbyteArray name, jint mode) {
  (void)c;
  NAME_OR_EINVAL(env, name, nm);
  return zero_or_errno(mkdirat(dirfd, nm.buf, (mode_t)(mode & 0777)));
}

/* fstat's or fstatat's result r as Java gets it: st's fields into out and 0, or -errno. */
static jint stat_result(JNIEnv *env, int r, const struct stat *st, jlongArray out) {
  if (r != 0) {
    return neg_errno();
  }
  jlong v[8];
  v[0] = (jlong)st->st_mode;
  v[1] = (jlong)st->st_size;
  v[2] = (jlong)st->st_blocks * 512;
  v[3] = (jlong)st->st_dev;
  v[4] = (jlong)st->st_ino;
  v[5] = (jlong)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
  v[6] = (jlong)st->st_nlink;
  v[7] = (jlong)st->st_uid;
  (*env)->SetLongArrayRegion(env, out, 0, 8, v);
  return 0;
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_fstat(JNIEnv *env, jclass c, jint fd,
                                                               jlongArray out) {
  (void)c;
  struct stat st;
  return stat_result(env, fstat(fd, &st), &st, out);
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_fstatAt(JNIEnv *env, jclass c, jint dirfd,
                                                                 jbyteArray name, jlongArray out) {
  (void)c;
  NAME_OR_EINVAL(env, name, nm);
  struct stat st;
  return stat_result(env, fstatat(dirfd, nm.buf, &st, AT_SYMLINK_NOFOLLOW), &st, out);
}

static char *direct(JNIEnv *env, jobject buf, jint off, jint len) {
  char *base = (char *)(*env)->GetDirectBufferAddress(env, buf);
  jlong cap = (*env)->GetDirectBufferCapacity(env, buf);
  if (base == NULL || off < 0 || len < 0 || (jlong)off + len > cap) {
    return NULL;
  }
  return base + off;
}

/* pread or pwrite (write != 0) of a direct buffer's bytes [off, off + len) at pos. */
static jint transfer(JNIEnv *env, jint fd, jobject buf, jint off, jint len, jlong pos, int write) {
  char *p = direct(env, buf, off, len);
  if (p == NULL) {
    return -EINVAL;
  }
  return count_or_errno(write ? RETRY(pwrite(fd, p, (size_t)len, (off_t)pos))
                              : RETRY(pread(fd, p, (size_t)len, (off_t)pos)));
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_pread(JNIEnv *env, jclass c, jint fd,
                                                               jobject buf, jint off, jint len,
                                                               jlong pos) {
  (void)c;
  return transfer(env, fd, buf, off, len, pos, 0);
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_pwrite(JNIEnv *env, jclass c, jint fd,
                                                                jobject buf, jint off, jint len,
                                                                jlong pos) {
  (void)c;
  return transfer(env, fd, buf, off, len, pos, 1);
}

/* whence: 0 SEEK_SET, 3 SEEK_DATA, 4 SEEK_HOLE (the Java side passes the C values below). */
JNIEXPORT jlong JNICALL Java_dev_pysandbox_core_files_NativeFs_lseek(JNIEnv *env, jclass c, jint fd,
                                                                jlong pos, jint whence) {
  (void)env;
  (void)c;
  int w = whence == 3 ? SEEK_DATA : whence == 4 ? SEEK_HOLE : SEEK_SET;
  off_t r = lseek(fd, (off_t)pos, w);
  return r < 0 ? (jlong)neg_errno() : (jlong)r;
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_ftruncate(JNIEnv *env, jclass c, jint fd,
                                                                   jlong len) {
  (void)env;
  (void)c;
  return zero_or_errno(RETRY(ftruncate(fd, (off_t)len)));
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_getdents(JNIEnv *env, jclass c, jint fd,
                                                                  jobject buf, jint len) {
  (void)c;
  char *p = direct(env, buf, 0, len);
  if (p == NULL) {
    return -EINVAL;
  }
  return count_or_errno(RETRY(syscall(SYS_getdents64, fd, p, (size_t)len)));
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_unlinkAt(JNIEnv *env, jclass c,
                                                                  jint dirfd, jbyteArray name,
                                                                  jboolean dir) {
  (void)c;
  NAME_OR_EINVAL(env, name, nm);
  return zero_or_errno(unlinkat(dirfd, nm.buf, dir ? AT_REMOVEDIR : 0));
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_renameNoReplace(JNIEnv *env, jclass c,
                                                                         jint fromdir,
                                                                         jbyteArray from,
                                                                         jint todir,
                                                                         jbyteArray to) {
  (void)c;
  name_t a, b;
  if (!get_name(env, from, &a) || !get_name(env, to, &b)) {
    return -EINVAL;
  }
  return zero_or_errno(syscall(SYS_renameat2, fromdir, a.buf, todir, b.buf, RENAME_NOREPLACE));
}

/*
 * Gives the server back a directory the code made unreadable (a server that is not root): the
 * directory is opened with O_PATH | O_NOFOLLOW | O_DIRECTORY, so a link swapped in is refused,
 * and changed through /proc/self/fd, which names exactly the inode opened.
 */
JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_chmodDir(JNIEnv *env, jclass c,
                                                                  jint dirfd, jbyteArray name,
                                                                  jint mode) {
  (void)c;
  jint fd = open_name(env, dirfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) {
    return fd;
  }
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  int r = chmod(proc, (mode_t)(mode & 0777));
  int e = errno;
  close(fd);
  return r == 0 ? 0 : -e;
}

/* fsync: the file's data and metadata on the disk, or the write-back error that lost them. */
JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_fsync(JNIEnv *env, jclass c, jint fd) {
  (void)env;
  (void)c;
  return zero_or_errno(RETRY(fsync(fd)));
}

/*
 * syncfs: everything of the file system holding fd on the disk; since Linux 5.8 it also reports
 * a write-back error of that file system seen since fd was opened (a build's thousands of files
 * are made durable, and checked, by one call).
 */
JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_syncfs(JNIEnv *env, jclass c, jint fd) {
  (void)env;
  (void)c;
  return zero_or_errno(RETRY(syncfs(fd)));
}

/*
 * Moves the process's stdout out of the JVM's way: the stream a client reads (fd 1) is duplicated
 * to a new descriptor (close-on-exec, 3 or above) that the caller writes the protocol to, and fd 1
 * becomes a copy of stderr. What the JVM itself prints to fd 1 (the header of a fatal error report
 * goes there whatever -XX:+DisplayVMOutputToStderr says) then lands on stderr. Returns a
 * java.io.FileDescriptor for the new descriptor, or NULL with a pending exception.
 */
JNIEXPORT jobject JNICALL Java_dev_pysandbox_core_files_NativeFs_moveStdout(JNIEnv *env, jclass c) {
  (void)c;
  jclass fdClass = (*env)->FindClass(env, "java/io/FileDescriptor");
  if (fdClass == NULL) {
    return NULL;
  }
  jmethodID init = (*env)->GetMethodID(env, fdClass, "<init>", "()V");
  jfieldID field = (*env)->GetFieldID(env, fdClass, "fd", "I");
  if (init == NULL || field == NULL) {
    return NULL;
  }
  int keep = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (keep < 0) {
    return NULL;
  }
  jobject out = (*env)->NewObject(env, fdClass, init);
  if (out == NULL) {
    close(keep);
    return NULL;
  }
  if (RETRY(dup2(2, 1)) < 0) {
    close(keep);
    return NULL;
  }
  (*env)->SetIntField(env, out, field, keep);
  return out;
}

JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_close(JNIEnv *env, jclass c, jint fd) {
  (void)env;
  (void)c;
  /* Never retried on EINTR: on Linux the descriptor is gone either way. */
  return zero_or_errno(close(fd));
}

JNIEXPORT jstring JNICALL Java_dev_pysandbox_core_files_NativeFs_strerror(JNIEnv *env, jclass c,
                                                                     jint err) {
  (void)c;
  char buf[256];
  const char *s = strerror_r(err, buf, sizeof buf);
  return (*env)->NewStringUTF(env, s);
}

/*
 * Lowers the calling thread's CPU priority (its nice value; Linux schedules threads as tasks, so
 * setpriority on the thread id touches this thread only). For background work that must yield to
 * runs. 0 or -errno.
 */
JNIEXPORT jint JNICALL Java_dev_pysandbox_core_files_NativeFs_niceThisThread(JNIEnv *env, jclass c,
                                                                      jint nice) {
  (void)env;
  (void)c;
  pid_t tid = (pid_t)syscall(SYS_gettid);
  return setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0 ? 0 : -errno;
}
