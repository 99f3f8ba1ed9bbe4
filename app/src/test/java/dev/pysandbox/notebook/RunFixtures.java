package dev.pysandbox.notebook;

import dev.pysandbox.api.ErrorInfo;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.util.Sha256;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;

/** Run records shaped like the ones the server makes (fields as {@code Execution} fills them). */
final class RunFixtures {
  private RunFixtures() {}

  /** A finished, successful run of {@code code} that printed {@code stdout}. */
  static RunRecord.Builder succeeded(String runId, String code, String stdout) {
    Map<String, Object> limits = new LinkedHashMap<>();
    limits.put("memory_mb", 512);
    limits.put("max_processes", 64);
    limits.put("cpu_seconds", null);
    limits.put("disk_mb", 256);
    return RunRecord.builder()
        .runId(runId)
        .sessionId("sess_0123456789ab")
        .status(RunStatus.SUCCEEDED)
        .code(code)
        .codeHash(Sha256.hex(code.getBytes(StandardCharsets.UTF_8)))
        .stdout(stdout)
        .stderr("")
        .stdoutBytes(stdout.getBytes(StandardCharsets.UTF_8).length)
        .exitCode(0)
        .timeoutSeconds(30)
        .limits(limits)
        .backend("bwrap")
        .createdAt("2025-05-01T10:00:00.123Z")
        .finishedAt("2025-05-01T10:00:00.171Z")
        .durationMs(48L)
        .interpreter("3.11.2")
        .envHash("9f2c" + "0".repeat(60))
        .serverVersion("0.1.0");
  }

  static RunRecord plain() {
    return succeeded("run_00000000000000000001", "print('hello')\nprint(1 + 2)\n", "hello\n3\n")
        .description("Say hello and add")
        .build();
  }

  /** {@code 1 / 0}, with the traceback the runner reports (its own frames dropped). */
  static RunRecord zeroDivision(String runId) {
    return succeeded(runId, "x = 1\nprint('before')\ny = x / 0\n", "before\n")
        .status(RunStatus.FAILED)
        .exitCode(1)
        .error(
            new ErrorInfo(
                "ZeroDivisionError",
                "division by zero",
                "Traceback (most recent call last):\n"
                    + "  File \"<cell-1>\", line 3, in <module>\n"
                    + "    y = x / 0\n"
                    + "        ~~^~~\n"
                    + "ZeroDivisionError: division by zero\n"))
        .message("ZeroDivisionError: division by zero")
        .build();
  }

  static RunRecord dataFrame() {
    return succeeded(
            "run_00000000000000000003",
            "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': [3, 4]})\ndf\n",
            "")
        .result(
            Map.of(
                "text/plain",
                "   a  b\n0  1  3\n1  2  4",
                "text/html",
                "<div>\n<table border=\"1\" class=\"dataframe\">\n  <thead>\n    <tr"
                    + " style=\"text-align: right;\">\n      <th></th>\n      <th>a</th>\n"
                    + "      <th>b</th>\n    </tr>\n  </thead>\n  <tbody>\n    <tr>\n"
                    + "      <th>0</th>\n      <td>1</td>\n      <td>3</td>\n    </tr>\n"
                    + "  </tbody>\n</table>\n</div>"))
        .build();
  }

  static RunRecord figure() {
    return succeeded(
            "run_00000000000000000004",
            "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\n",
            "")
        .displays(
            List.of(
                Map.of(
                    "text/plain",
                    "<Figure size 640x480 with 1 Axes>",
                    "image/png",
                    tinyPngBase64())))
        .build();
  }

  /** Killed at its 5 s limit: no error from the code, no exit code, the server's message. */
  static RunRecord timedOut() {
    return succeeded(
            "run_00000000000000000005",
            "import time\nprint('started')\nwhile True:\n    time.sleep(1)\n",
            "started\n")
        .status(RunStatus.TIMED_OUT)
        .killReason(KillReason.TIMEOUT)
        .exitCode(null)
        .timeoutSeconds(5)
        .durationMs(5012L)
        .message("execution timed out after 5012 ms (limit 5 s); its sandbox was killed")
        .build();
  }

  /** {@code print('a'} : the runner's compile failed, so the traceback has no frame. */
  static RunRecord syntaxError(String runId) {
    return succeeded(runId, "print('a'\nprint('b')\n", "")
        .status(RunStatus.FAILED)
        .exitCode(1)
        .error(
            new ErrorInfo(
                "SyntaxError",
                "'(' was never closed",
                "  File \"<cell-2>\", line 1\n"
                    + "    print('a'\n"
                    + "         ^\n"
                    + "SyntaxError: '(' was never closed\n"))
        .message("SyntaxError: '(' was never closed")
        .build();
  }

  static String tinyPngBase64() {
    BufferedImage image = new BufferedImage(2, 2, BufferedImage.TYPE_INT_RGB);
    image.setRGB(0, 0, 0xff0000);
    image.setRGB(1, 1, 0x0000ff);
    ByteArrayOutputStream png = new ByteArrayOutputStream();
    try {
      ImageIO.write(image, "png", png);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Base64.getEncoder().encodeToString(png.toByteArray());
  }
}
