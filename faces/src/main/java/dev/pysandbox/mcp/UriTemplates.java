package dev.pysandbox.mcp;

import io.modelcontextprotocol.util.McpUriTemplateManager;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Matches a read's URI to a resource template, with RFC 6570's reserved expansion: {@code {name}}
 * is one path segment, {@code {+name}} may span several ({@code files/{+path}} matches {@code
 * files/out/plot.png}). The SDK's own matcher takes every variable as one segment, so a file in a
 * subdirectory would match no template.
 */
final class UriTemplates implements McpUriTemplateManager {
  private static final Pattern VARIABLE = Pattern.compile("\\{(\\+?)([A-Za-z0-9_]+)\\}");

  private final String template;
  private final List<String> names = new ArrayList<>();
  private final Pattern pattern;

  UriTemplates(String template) {
    this.template = template;
    StringBuilder regex = new StringBuilder();
    Matcher m = VARIABLE.matcher(template);
    int at = 0;
    while (m.find()) {
      regex.append(Pattern.quote(template.substring(at, m.start())));
      regex.append(m.group(1).isEmpty() ? "([^/]+)" : "(.+)");
      names.add(m.group(2));
      at = m.end();
    }
    regex.append(Pattern.quote(template.substring(at)));
    this.pattern = Pattern.compile(regex.toString(), Pattern.DOTALL);
  }

  @Override
  public List<String> getVariableNames() {
    return List.copyOf(names);
  }

  @Override
  public Map<String, String> extractVariableValues(String uri) {
    Map<String, String> values = new LinkedHashMap<>();
    Matcher m = uri == null ? null : pattern.matcher(uri);
    if (m != null && m.matches()) {
      for (int i = 0; i < names.size(); i++) {
        values.put(names.get(i), m.group(i + 1));
      }
    }
    return values;
  }

  @Override
  public boolean matches(String uri) {
    return uri != null && pattern.matcher(uri).matches();
  }

  @Override
  public boolean isUriTemplate(String uri) {
    return VARIABLE.matcher(uri == null ? template : uri).find();
  }
}
