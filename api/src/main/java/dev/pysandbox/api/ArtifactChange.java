package dev.pysandbox.api;

/** What a run did to a workspace file. */
public enum ArtifactChange implements WireEnum {
  CREATED,
  MODIFIED,
  DELETED;

  @Override
  public String toString() {
    return wireName();
  }
}
