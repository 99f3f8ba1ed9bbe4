package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** What a run did to a workspace file. */
public enum ArtifactChange {
  CREATED,
  MODIFIED,
  DELETED;

  @JsonValue
  public String wireName() {
    return WireNames.of(this);
  }

  @JsonCreator
  public static ArtifactChange fromWire(String name) {
    return WireNames.parse(ArtifactChange.class, "artifact change", name);
  }

  @Override
  public String toString() {
    return wireName();
  }
}
