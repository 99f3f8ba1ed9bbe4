package dev.pysandbox.core.requests;

import org.slf4j.MDC;

/**
 * The id of the request a call serves, as the face that received it put it in the logging context
 * (SLF4J MDC key {@value #MDC_KEY}): logs carry it, and a run records it.
 */
public final class RequestIds {
  /** The MDC key the faces set for the length of a call. */
  public static final String MDC_KEY = "request_id";

  private RequestIds() {}

  /** The current call's request id, or {@code null} outside a request (stdio, CLI). */
  public static String current() {
    String id = MDC.get(MDC_KEY);
    return id == null || id.length() > 64 ? null : id;
  }
}
