package dev.pysandbox.api;

/** This build's version, as the faces report it. */
public final class Version {
  public static final String VALUE = "0.1.0";

  private Version() {}
}
