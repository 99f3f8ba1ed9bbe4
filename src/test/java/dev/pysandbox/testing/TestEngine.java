package dev.pysandbox.testing;

/** Temporary: the engine the docker tests use (replaced by the shared fixture). */
public final class TestEngine {
  private static final TestEngine INSTANCE = new TestEngine();

  public static TestEngine get() {
    return INSTANCE;
  }

  public String dockerHost() {
    return System.getenv("PYSANDBOX_TEST_DOCKER_HOST");
  }

  public String image() {
    return System.getenv().getOrDefault("PYSANDBOX_TEST_IMAGE", "pysandbox-python:0.1.0-SNAPSHOT");
  }
}
