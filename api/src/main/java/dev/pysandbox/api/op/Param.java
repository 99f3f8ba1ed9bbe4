package dev.pysandbox.api.op;

import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * One argument of an {@link Operation}: its name on the wire, its JSON kind, whether it is
 * required, its limits as the schema states them and what it is for. Immutable; built with the
 * factories and the {@code with}-style methods below, e.g. {@code Param.integer("limit", "Runs per
 * page.").min(1).max(1000).defaultValue(20)}.
 *
 * <p>The kind, presence and {@link #allowed} values are enforced by the parser ({@link Arguments}).
 * The limits ({@link #minimum}, {@link #maximum}, {@link #minLength}, {@link #maxLength}, {@link
 * #pattern}) tell clients the rule; the rule is enforced once, by the request value the argument
 * becomes or by the core, which take it from the same constant (see DESIGN.md, "Operations are
 * declared once").
 *
 * @param name the argument's name on the wire, e.g. {@code session_id}
 * @param kind its JSON type
 * @param isRequired true when a call must give it
 * @param description one or two sentences for the client (and its model)
 * @param minimum smallest value ({@link Kind#INTEGER}, {@link Kind#LONG}, {@link Kind#NUMBER}), or
 *     {@code null}
 * @param maximum largest value, or {@code null}
 * @param minLength shortest string, or {@code null}
 * @param maxLength longest string in characters, or {@code null}
 * @param pattern the regular expression a string matches as a whole (unanchored), or {@code null}
 * @param allowed the only values a string may take, or an empty list for any
 * @param defaultValue the value when absent (as {@link Arguments} returns it), or {@code null}
 * @param defaultApplied true when the parser fills {@code defaultValue} in; false when it is only
 *     shown, because the server applies its configured default to an absent value
 */
public record Param(
    String name,
    Kind kind,
    boolean isRequired,
    String description,
    Number minimum,
    Number maximum,
    Integer minLength,
    Integer maxLength,
    String pattern,
    List<String> allowed,
    Object defaultValue,
    boolean defaultApplied) {

  /** The JSON kinds of argument, each with the Java type {@link Arguments} returns. */
  public enum Kind {
    /** {@link String}. */
    STRING("string", String.class),
    /** {@link Integer}: a whole number within int. */
    INTEGER("integer", Integer.class),
    /** {@link Long}: a whole number. */
    LONG("integer", Long.class),
    /** {@link Double}: any finite number. */
    NUMBER("number", Double.class),
    /** {@link Boolean}. */
    BOOLEAN("boolean", Boolean.class),
    /** {@code Map<String, Object>}: a JSON object. */
    OBJECT("object", java.util.Map.class),
    /** {@code List<String>}: an array of strings. */
    STRING_LIST("array", List.class);

    private final String jsonType;
    private final Class<?> javaType;

    Kind(String jsonType, Class<?> javaType) {
      this.jsonType = jsonType;
      this.javaType = javaType;
    }

    /** What {@link Arguments} returns for an argument of this kind. */
    public Class<?> javaType() {
      return javaType;
    }

    /** The JSON Schema type. */
    public String jsonType() {
      return jsonType;
    }
  }

  public Param {
    Objects.requireNonNull(name);
    Objects.requireNonNull(kind);
    Objects.requireNonNull(description);
    allowed = List.copyOf(allowed);
    if (defaultValue != null && !kind.javaType().isInstance(defaultValue)) {
      throw new IllegalArgumentException(
          name + ": a default of " + defaultValue.getClass() + " for a " + kind + " argument");
    }
  }

  private static Param of(String name, Kind kind, String description) {
    return new Param(
        name, kind, false, description, null, null, null, null, null, List.of(), null, false);
  }

  public static Param string(String name, String description) {
    return of(name, Kind.STRING, description);
  }

  public static Param integer(String name, String description) {
    return of(name, Kind.INTEGER, description);
  }

  public static Param longInteger(String name, String description) {
    return of(name, Kind.LONG, description);
  }

  public static Param number(String name, String description) {
    return of(name, Kind.NUMBER, description);
  }

  public static Param bool(String name, String description) {
    return of(name, Kind.BOOLEAN, description);
  }

  public static Param object(String name, String description) {
    return of(name, Kind.OBJECT, description);
  }

  public static Param strings(String name, String description) {
    return of(name, Kind.STRING_LIST, description);
  }

  /** A string that is an id ({@link dev.pysandbox.api.Ids}). */
  public static Param id(String name, String description) {
    return string(name, description).pattern(dev.pysandbox.api.Ids.REGEX);
  }

  public Param required() {
    return edit(d -> d.isRequired = true);
  }

  public Param min(Number value) {
    return edit(d -> d.minimum = value);
  }

  public Param max(Number value) {
    return edit(d -> d.maximum = value);
  }

  public Param minLength(int value) {
    return edit(d -> d.minLength = value);
  }

  public Param maxLength(int value) {
    return edit(d -> d.maxLength = value);
  }

  public Param pattern(String regex) {
    return edit(d -> d.pattern = regex);
  }

  /** The only values a string may take; the parser refuses any other. */
  public Param oneOf(List<String> values) {
    return edit(d -> d.allowed = values);
  }

  /** The value an absent argument takes, filled in by the parser. */
  public Param defaultValue(Object value) {
    return withDefault(value, true);
  }

  /**
   * The value an absent argument takes when the server's configuration keeps its built-in default:
   * shown to clients, but the argument stays absent so that the server applies its own.
   */
  public Param serverDefault(Object value) {
    return withDefault(value, false);
  }

  private Param withDefault(Object value, boolean applied) {
    return edit(
        d -> {
          d.defaultValue = value;
          d.defaultApplied = applied;
        });
  }

  /** This parameter with one or two components changed: the one place a copy is made. */
  private Param edit(Consumer<Draft> change) {
    Draft draft = new Draft(this);
    change.accept(draft);
    return draft.build();
  }

  /** A mutable copy of a {@link Param}'s components, for {@link #edit}. */
  private static final class Draft {
    private final String name;
    private final Kind kind;
    private final String description;
    private boolean isRequired;
    private Number minimum;
    private Number maximum;
    private Integer minLength;
    private Integer maxLength;
    private String pattern;
    private List<String> allowed;
    private Object defaultValue;
    private boolean defaultApplied;

    private Draft(Param p) {
      name = p.name;
      kind = p.kind;
      description = p.description;
      isRequired = p.isRequired;
      minimum = p.minimum;
      maximum = p.maximum;
      minLength = p.minLength;
      maxLength = p.maxLength;
      pattern = p.pattern;
      allowed = p.allowed;
      defaultValue = p.defaultValue;
      defaultApplied = p.defaultApplied;
    }

    private Param build() {
      return new Param(
          name,
          kind,
          isRequired,
          description,
          minimum,
          maximum,
          minLength,
          maxLength,
          pattern,
          allowed,
          defaultValue,
          defaultApplied);
    }
  }
}
