package dev.pysandbox.core.files;

import dev.pysandbox.util.StrictUtf8;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Walks a directory tree the code can change while it is walked, iteratively and by descriptor:
 * each directory is opened relative to its parent with {@code O_NOFOLLOW} and each entry is looked
 * at with {@code fstatat} in the directory it was listed in, so no path is ever resolved again (no
 * PATH_MAX, no link followed, however the code swaps things around) and depth costs heap, not
 * stack.
 *
 * <p>Down to {@link #LIST_DEPTH} levels every directory on the way stays open and entries are
 * reported with their path. Deeper, entries are still reported (for counting, or deleting) but
 * without a path, and a directory's descriptor is closed while its children are walked: the walk
 * comes back through {@code ..}, checks that it is the same directory (device and inode), and
 * resumes reading where it left off. If it is not (the code moved the tree), the part below {@link
 * #LIST_DEPTH} is left and the walk is incomplete; going up can never leave the tree, since the
 * directories held open include the root. So at most {@code LIST_DEPTH + 2} descriptors are open.
 */
public final class TreeWalk {
  /** Entries this deep (the root's own are 1) are reported with their path. */
  static final int LIST_DEPTH = 256;

  /** A walk gives up below this depth (and is incomplete). */
  static final int MAX_DEPTH = 1 << 18;

  /** A walk gives up after this many entries (and is incomplete). */
  static final long MAX_ENTRIES = 1L << 22;

  private static final int BUFFER_BYTES = 8 * 1024;

  /** Buffers kept per thread between walks (a small workspace's walk needs one or two). */
  private static final int BUFFERS_KEPT = 2;

  private static final ThreadLocal<ArrayDeque<ByteBuffer>> SPARE =
      ThreadLocal.withInitial(ArrayDeque::new);
  private static final byte DT_DIR = 4;

  /** What a walk does with what it finds. */
  public interface Visitor {
    /**
     * One entry.
     *
     * @param dir the directory that holds it (open during this call only)
     * @param name its name as the file system has it
     * @param path its path from the root, or {@code null} deeper than {@link #LIST_DEPTH} or when
     *     the name, or one on the way, is not UTF-8 (then {@code pathless} is called instead)
     * @param st what {@code fstatat} said, not following a link
     * @param depth 1 for the root's own entries
     * @return for a directory, whether to walk into it
     */
    boolean entry(Descriptor dir, byte[] name, String path, Stat st, int depth) throws IOException;

    /** After the directory {@code name} of {@code dir} was walked into and left. */
    default void left(Descriptor dir, byte[] name, int depth) throws IOException {}

    /** A directory at {@link #LIST_DEPTH} that holds something: its content is not listed. */
    default void tooDeep(String path) {}

    /** An entry whose name is not UTF-8 (its path shows the undecodable bytes as U+FFFD). */
    default void notUtf8(String path) {}

    /** Whether entries get a path (building paths costs; a walk that only counts needs none). */
    default boolean wantsPaths() {
      return true;
    }

    /** Asked before each entry: true ends the walk. */
    default boolean stop() {
      return false;
    }
  }

  /** A walk that acts on what it meets (counts, deletes) and needs no entry's path. */
  abstract static class PathlessVisitor implements Visitor {
    @Override
    public final boolean wantsPaths() {
      return false;
    }
  }

  /** How a walk ended. */
  enum Outcome {
    COMPLETE,
    /** Stopped by the visitor. */
    STOPPED,
    /** More than {@link #MAX_ENTRIES} entries, or deeper than {@link #MAX_DEPTH}. */
    TOO_LARGE,
    /** The code moved a directory below {@link #LIST_DEPTH} while it was walked. */
    MOVED
  }

  private static final class Frame {
    Descriptor dir;
    final byte[] name;
    final String prefix;
    final int depth;
    final long dev;
    final long ino;
    ByteBuffer buf;
    int pos;
    int len;
    long resumeAt;
    boolean reportedTooDeep;

    Frame(Descriptor dir, byte[] name, String prefix, int depth, long dev, long ino) {
      this.dir = dir;
      this.name = name;
      this.prefix = prefix;
      this.depth = depth;
      this.dev = dev;
      this.ino = ino;
    }
  }

  private final Visitor visitor;
  private final java.util.List<ByteBuffer> buffers = new java.util.ArrayList<>();
  private long entries;

  private TreeWalk(Visitor visitor) {
    this.visitor = visitor;
  }

  /** Walks everything under {@code root} (which stays open; the caller closes it). */
  public static Outcome walk(Descriptor root, Visitor visitor) throws IOException {
    return new TreeWalk(visitor).run(root);
  }

  private Outcome run(Descriptor root) throws IOException {
    Deque<Frame> stack = new ArrayDeque<>();
    stack.push(new Frame(root, null, "", 0, 0, 0));
    Outcome outcome = Outcome.COMPLETE;
    try {
      while (!stack.isEmpty()) {
        Frame f = stack.peek();
        if (visitor.stop()) {
          outcome = Outcome.STOPPED;
          break;
        }
        int at = next(f);
        if (at < 0) {
          stack.pop();
          Frame parent = stack.peek();
          if (parent == null) {
            break;
          }
          if (parent.dir == null && !reacquire(parent, f)) {
            f.dir.close();
            outcome = Outcome.MOVED;
            while (!stack.isEmpty() && stack.peek().dir == null) {
              stack.pop();
            }
            continue;
          }
          f.dir.close();
          visitor.left(parent.dir, f.name, f.depth);
          continue;
        }
        if (++entries > MAX_ENTRIES) {
          outcome = Outcome.TOO_LARGE;
          break;
        }
        visit(stack, f, at);
        if (stack.size() > MAX_DEPTH) {
          outcome = Outcome.TOO_LARGE;
          break;
        }
      }
    } finally {
      for (Frame f : stack) {
        if (f.depth > 0 && f.dir != null) {
          f.dir.close();
        }
      }
      ArrayDeque<ByteBuffer> spare = SPARE.get();
      for (ByteBuffer b : buffers) {
        if (b != null && spare.size() < BUFFERS_KEPT) {
          spare.push(b.clear());
        }
      }
    }
    return outcome;
  }

  private void visit(Deque<Frame> stack, Frame f, int at) throws IOException {
    ByteBuffer b = f.buf;
    int reclen = Short.toUnsignedInt(b.getShort(at + 16));
    int nameStart = at + 19;
    int nameEnd = nameStart;
    while (nameEnd < at + reclen && b.get(nameEnd) != 0) {
      nameEnd++;
    }
    byte[] name = new byte[nameEnd - nameStart];
    b.get(nameStart, name);
    if (isDotOrDotDot(name)) {
      return;
    }
    long dOff = b.getLong(at + 8);
    int depth = f.depth + 1;
    if (depth > LIST_DEPTH && !f.reportedTooDeep && f.prefix != null) {
      f.reportedTooDeep = true;
      visitor.tooDeep(f.prefix.substring(0, Math.max(0, f.prefix.length() - 1)));
    }
    Stat st;
    try {
      st = f.dir.stat(name);
    } catch (Descriptor.ErrnoException e) {
      return;
    }
    if (st == null) {
      return;
    }
    String path = null;
    if (f.prefix != null && depth <= LIST_DEPTH && visitor.wantsPaths()) {
      String decoded = decode(name);
      if (decoded == null) {
        visitor.notUtf8(f.prefix + new String(name, StandardCharsets.UTF_8));
        if (!st.isDirectory()) {
          return;
        }
      } else {
        path = f.prefix + decoded;
      }
    }
    boolean descend = visitor.entry(f.dir, name, path, st, depth);
    if (!descend || !st.isDirectory()) {
      return;
    }
    Descriptor child;
    try {
      child = f.dir.openDirectory(name);
    } catch (Descriptor.ErrnoException e) {
      return; // swapped for a link or something else since fstatat, or gone: not walked
    }
    Stat cs;
    if (depth > LIST_DEPTH) {
      try {
        cs = child.stat();
      } catch (IOException e) {
        child.close();
        throw e;
      }
    } else {
      cs = null;
    }
    if (f.depth > LIST_DEPTH) {
      // Deep: let go of this directory while the child is walked; come back through "..".
      f.resumeAt = dOff;
      f.dir.close();
      f.dir = null;
      f.buf = null;
      f.pos = 0;
      f.len = 0;
    }
    stack.push(
        new Frame(
            child,
            name,
            path == null ? null : path + "/",
            depth,
            cs == null ? 0 : cs.dev(),
            cs == null ? 0 : cs.ino()));
  }

  /** The offset of the next entry in the frame's buffer, reading more as needed; -1 at the end. */
  private int next(Frame f) throws IOException {
    if (f.pos >= f.len) {
      if (f.buf == null) {
        f.buf = buffer(f.depth);
      }
      int n;
      try {
        n = f.dir.readEntries(f.buf);
      } catch (Descriptor.ErrnoException e) {
        return -1; // the directory was removed while it was read
      }
      if (n <= 0) {
        return -1;
      }
      f.pos = 0;
      f.len = n;
    }
    int at = f.pos;
    f.pos += Short.toUnsignedInt(f.buf.getShort(at + 16));
    return at;
  }

  /**
   * Opens a deep frame's directory again from its child, through "..", and checks it is the same
   * directory; then reads on after the child's entry.
   */
  private static boolean reacquire(Frame parent, Frame child) throws IOException {
    Descriptor up;
    try {
      up = child.dir.openParent();
    } catch (Descriptor.ErrnoException e) {
      return false;
    }
    Stat s = up.stat();
    if (s.dev() != parent.dev || s.ino() != parent.ino || !s.isDirectory()) {
      up.close();
      return false;
    }
    up.seekEntries(parent.resumeAt);
    parent.dir = up;
    return true;
  }

  /** One buffer per depth while directories stay open; one shared by every deeper directory. */
  private ByteBuffer buffer(int depth) {
    int i = Math.min(depth, LIST_DEPTH + 1);
    while (buffers.size() <= i) {
      buffers.add(null);
    }
    if (buffers.get(i) == null) {
      ByteBuffer spare = SPARE.get().poll();
      buffers.set(
          i,
          spare != null
              ? spare
              : ByteBuffer.allocateDirect(BUFFER_BYTES).order(ByteOrder.nativeOrder()));
    }
    return buffers.get(i);
  }

  private static boolean isDotOrDotDot(byte[] n) {
    return (n.length == 1 && n[0] == '.') || (n.length == 2 && n[0] == '.' && n[1] == '.');
  }

  /** The name as UTF-8 text, or {@code null} when it is not UTF-8. */
  static String decode(byte[] name) {
    boolean ascii = true;
    for (byte b : name) {
      if (b < 0) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      return new String(name, StandardCharsets.ISO_8859_1);
    }
    return StrictUtf8.decode(name);
  }
}
