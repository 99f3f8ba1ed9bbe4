package dev.pysandbox.notebook;

/**
 * Free text (a description, a title, an error message) as Markdown that renders as that text and
 * nothing more, in Jupyter (CommonMark and GitHub's extensions) and in marimo (Python-Markdown with
 * pymdownx extensions): no HTML, link, autolink, image, heading, list, quote, table, code,
 * emphasis, math or block of any kind can start in it, and the raw text never holds a tag.
 *
 * <p>Python-Markdown honours a backslash only before its own short list of characters (and shows it
 * before any other), and reads {@code \[} as the start of display math; so characters on that list
 * are backslash-escaped, and the others that matter become numeric character references, which both
 * read as literal text ({@code <}, {@code >}, {@code &}, brackets, {@code $}, {@code @}, a {@code
 * :} of a URL or an icon, and {@code =} or {@code /} opening a line). Characters that only matter
 * at the start of a line (a list's {@code -} or {@code 1.}, a setext {@code =} line, a {@code ///}
 * block) are escaped there; leading blanks are dropped, so no line is indented code. Line breaks
 * stay (a blank line still separates paragraphs).
 */
final class MarkdownText {
  /** Escapable with a backslash in both dialects and markup somewhere in one of them. */
  private static final String BACKSLASHED = "\\`*_{}#+!|~^";

  private MarkdownText() {}

  static String escape(String text) {
    String[] lines = text.replace("\r\n", "\n").replace('\r', '\n').split("\n", -1);
    StringBuilder b = new StringBuilder(text.length() + 16);
    for (int n = 0; n < lines.length; n++) {
      if (n > 0) {
        b.append('\n');
      }
      escapeLine(lines[n].stripLeading(), b);
    }
    return b.toString();
  }

  /** {@link #escape}d, on one line (line breaks become spaces): for a heading or a headline. */
  static String escapeLine(String text) {
    StringBuilder b = new StringBuilder(text.length() + 16);
    escapeLine(text.replaceAll("[\\r\\n]+", " ").strip(), b);
    return b.toString();
  }

  private static void escapeLine(String s, StringBuilder b) {
    boolean digitsSoFar = true;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      char next = i + 1 < s.length() ? s.charAt(i + 1) : 0;
      boolean afterDigits = digitsSoFar && i > 0;
      switch (c) {
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '&' -> b.append("&amp;");
        case '[' -> b.append("&#91;");
        case ']' -> b.append("&#93;");
        case '$' -> b.append("&#36;");
        case '@' -> b.append("&#64;");
        case ':' -> b.append(next == '/' || next == ':' ? "&#58;" : ":");
        case '=' -> b.append(i == 0 ? "&#61;" : "=");
        case '/' -> b.append(i == 0 ? "&#47;" : "/");
        case '-' -> b.append(i == 0 ? "\\-" : "-");
        case ')' -> b.append(afterDigits ? "\\)" : ")");
        case '.' -> b.append(afterDigits || afterWww(s, i) ? "\\." : ".");
        default -> {
          if (BACKSLASHED.indexOf(c) >= 0) {
            b.append('\\');
          }
          b.append(c);
        }
      }
      digitsSoFar = digitsSoFar && c >= '0' && c <= '9';
    }
  }

  private static boolean afterWww(String s, int dot) {
    return dot >= 3 && s.regionMatches(true, dot - 3, "www", 0, 3);
  }
}
