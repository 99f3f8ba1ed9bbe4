package dev.pysandbox.core.agents;

import dev.pysandbox.api.SessionInfo;

/** The system message of an agent run: what it is, what the sandbox has, how to answer. */
final class AgentPrompt {
  private AgentPrompt() {}

  static String system(
      boolean tools, String interpreter, SessionInfo session, String files, int observationChars) {
    StringBuilder b = new StringBuilder();
    b.append(
        "You are a data analyst who works by running Python in a sandbox. Solve the user's task;"
            + " check your result with code when you can.\n\n");
    b.append("The sandbox: ")
        .append(interpreter == null ? "Python 3" : "Python " + interpreter)
        .append(", tier ")
        .append(session.tier() == null ? "basic" : session.tier());
    if (session.packages() != null && !session.packages().isEmpty()) {
      b.append(", packages ").append(String.join(", ", session.packages()));
    }
    b.append(
        ". It has no network. Variables persist between code runs; the working directory is"
            + " /mnt/data, where the session's files are:\n");
    b.append(files).append('\n');
    if (tools) {
      b.append("Run code with the run_python tool; read_file and list_files show /mnt/data. ");
    } else {
      b.append(
          "To run code, put it in one fenced block that starts with ```python and ends with ```;"
              + " you will be given its output. ");
    }
    b.append("Outputs longer than ")
        .append(observationChars)
        .append(
            " characters are cut in the middle. When you are done, reply with your final answer"
                + " and no code: a reply with nothing to run ends the task.");
    return b.toString();
  }
}
