package dev.pysandbox.api;

import dev.pysandbox.api.op.Arguments;

/**
 * The calls of one HTTP caller that may hold a server thread for long on a peer's pace rather than
 * the server's — a wait ({@code get_run}, {@code agent_status} or {@code agent_run} with {@code
 * wait_seconds}), a download ({@code download_file}, either way) and an upload ({@code
 * upload_file}) — counted against the caller's cap ({@code http_max_long_calls_per_key}) so that
 * one key under its rate limit cannot take every thread with them. Each face asks for a slot when
 * it knows the operation and its arguments, before it waits, reads the body or fetches anything;
 * the HTTP face puts the caller's on the request (and in MCP's transport context) under {@link
 * #ATTRIBUTE}. Without one (stdio, the CLI) nothing is counted: {@link #NONE}.
 */
public interface LongCalls {
  /** The request attribute (and MCP transport-context key) holding the caller's LongCalls. */
  String ATTRIBUTE = "pysandbox.long_calls";

  /** What a long call waits on. */
  enum Kind {
    WAIT,
    DOWNLOAD,
    UPLOAD
  }

  /** A slot held until closed. */
  interface Slot extends AutoCloseable {
    @Override
    void close();
  }

  /** A slot that holds nothing. */
  Slot FREE = () -> {};

  /** Counts nothing. */
  LongCalls NONE = (kind, operation) -> FREE;

  /**
   * Takes a slot for a call of {@code kind}.
   *
   * @throws PysandboxException {@code rate_limited} when the caller holds as many as its cap,
   *     saying which cap and what to do
   */
  Slot enter(Kind kind, String operation);

  /** What {@code operation} with {@code args} waits on, or null when it is not a long call. */
  static Kind kindOf(String operation, Arguments args) {
    return switch (operation) {
      case "download_file" -> Kind.DOWNLOAD;
      case "upload_file" -> Kind.UPLOAD;
      case "get_run", "agent_status", "agent_run" -> {
        Integer wait = args.integer("wait_seconds");
        yield wait != null && wait > 0 ? Kind.WAIT : null;
      }
      default -> null;
    };
  }

  /** Takes the slot {@code operation} needs from {@code calls} (an attribute's value, or null). */
  static Slot enter(Object calls, String operation, Arguments args) {
    Kind kind = kindOf(operation, args);
    if (kind == null || !(calls instanceof LongCalls c)) {
      return FREE;
    }
    return c.enter(kind, operation);
  }
}
