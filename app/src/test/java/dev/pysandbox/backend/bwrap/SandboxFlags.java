package dev.pysandbox.backend.bwrap;

import dev.pysandbox.api.Limits;
import dev.pysandbox.backend.InterpreterProbe;
import dev.pysandbox.backend.SandboxFiles;
import dev.pysandbox.backend.SandboxSpec;
import dev.pysandbox.config.DataLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The sandbox's own bwrap flags, without the runner, for the benchmark's baseline. */
public final class SandboxFlags {
  private SandboxFlags() {}

  /** Everything before the interpreter, minus the info fd only the launcher provides. */
  public static List<String> forBaseline(Path dataDir) throws IOException {
    DataLayout layout = new DataLayout(dataDir);
    SandboxFiles.installEtc(layout.libDir());
    String runner =
        SandboxFiles.installScript("/dev/pysandbox/worker/runner.py", "runner", layout.libDir());
    String analyzer =
        SandboxFiles.installScript(
            "/dev/pysandbox/worker/analyzer.py", "analyzer", layout.libDir());
    Path workspace = Files.createDirectories(dataDir.resolve("baseline-workspace"));
    var python = InterpreterProbe.probe(Path.of("/usr/bin/python3"));
    List<String> argv =
        BwrapCommand.build(
            Path.of("/usr/bin/bwrap"),
            python,
            workspace,
            layout.libDir(),
            runner,
            analyzer,
            new SandboxSpec(
                List.of(),
                1 << 20,
                new Limits(512L << 20, 128, 1, 1L << 30, 256L << 20),
                64L << 20),
            false,
            BwrapCommand.Extras.NONE);
    List<String> flags = new ArrayList<>(argv.subList(0, argv.indexOf(python.path().toString())));
    int info = flags.indexOf("--info-fd");
    flags.remove(info + 1);
    flags.remove(info);
    return flags;
  }
}
