package dev.pysandbox.worker;

/**
 * One output stream of one execution, as kept by the server.
 *
 * @param text the bytes kept, decoded as UTF-8 (head and tail around an omission marker when
 *     truncated)
 * @param truncated true when more bytes were produced than kept
 * @param totalBytes every byte produced, kept or not
 */
public record CapturedText(String text, boolean truncated, long totalBytes) {
  public static final CapturedText EMPTY = new CapturedText("", false, 0);
}
