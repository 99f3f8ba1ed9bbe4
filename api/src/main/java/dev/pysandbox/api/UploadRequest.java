package dev.pysandbox.api;

import java.util.regex.Pattern;

/**
 * A file to put in a session's workspace: exactly one of {@code content} (text, stored as UTF-8)
 * and {@code contentBase64}. Checked here, when the request is made; the size against the server's
 * {@code upload_max_bytes} is checked by the core.
 *
 * @param sessionId the session ({@link Ids})
 * @param filename a path below the workspace: names of letters, digits, '.', '_' and '-', 1-255
 *     characters each, with '/' between folders (at most 16 names), no ".."
 * @param overwrite false refuses to replace an existing file with {@code file_exists}
 * @throws PysandboxException {@code invalid_argument} naming what is wrong
 */
public record UploadRequest(
    String sessionId, String filename, String content, String contentBase64, boolean overwrite) {
  /**
   * A file's path below the workspace, unanchored: names of 1-255 letters, digits, '.', '_' and
   * '-', with '/' between folders, at most 16 names; ".." anywhere and "." as a name are refused
   * besides.
   */
  public static final String FILENAME_REGEX =
      "[A-Za-z0-9._-]{1,255}(?:/[A-Za-z0-9._-]{1,255}){0,15}";

  private static final Pattern FILENAME = Pattern.compile(FILENAME_REGEX);

  public UploadRequest {
    Ids.requireSessionId(sessionId);
    requireFilename(filename);
    if ((content == null) == (contentBase64 == null)) {
      throw PysandboxException.invalid("give exactly one of content and content_base64");
    }
  }

  /**
   * The rule for an uploaded file's name, for every way a file is uploaded.
   *
   * @return {@code filename}
   * @throws PysandboxException {@code invalid_argument} naming the rule
   */
  public static String requireFilename(String filename) {
    if (filename == null
        || !FILENAME.matcher(filename).matches()
        || filename.contains("..")
        || ("/" + filename + "/").contains("/./")) {
      throw PysandboxException.invalid(
          "filename "
              + PysandboxException.quote(filename)
              + " is invalid: use names of 1-255 letters, digits, '.', '_' or '-', with '/'"
              + " between folders below /mnt/data (at most 16 names), without '..'");
    }
    return filename;
  }
}
