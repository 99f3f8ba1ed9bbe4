package dev.pysandbox.backend;

/**
 * One backend tried when choosing the one to use, and why it could not be used.
 *
 * @param name the backend's name, e.g. {@code bwrap}
 * @param failure what is missing and how to install it; {@code null} when it works
 */
public record BackendAttempt(String name, String failure) {
  /** True when this backend can start sandboxes. */
  public boolean works() {
    return failure == null;
  }

  /** {@code name: failure}, without saying the name twice when the failure starts with it. */
  public String describe() {
    String why = failure == null ? "works" : failure;
    return why.startsWith(name + ":") ? why : name + ": " + why;
  }
}
