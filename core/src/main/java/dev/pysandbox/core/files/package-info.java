/**
 * Workspace files, read and written by descriptor, never by path: a sandbox's code is an adversary
 * of the server, and a path it can change between a look and an open (a link, a FIFO, a directory
 * swapped in) must not lead the server anywhere else. {@link dev.pysandbox.core.files.NativeFs} is
 * the small JNI library ({@code openat} with {@code O_NOFOLLOW|O_NONBLOCK}, {@code fstat}, {@code
 * getdents64}); {@link dev.pysandbox.core.files.Descriptor} an open directory or file; the rest
 * walk, snapshot, copy, write and delete trees through them, each bounded (entries, depth, bytes,
 * time). It depends on the api and the backend SPI (who owns a workspace) only; the core uses it.
 */
package dev.pysandbox.core.files;
