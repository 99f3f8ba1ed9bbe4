package dev.pysandbox.packages;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Sandboxed;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Wheels built in Java are real wheels: the layout the spec asks for, and pip installs them. */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Sandboxed
class TinyWheelsTest {
  @TempDir Path dir;

  private static Map<String, byte[]> entries(Path wheel) throws IOException {
    Map<String, byte[]> out = new LinkedHashMap<>();
    try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(wheel))) {
      for (ZipEntry e = zip.getNextEntry(); e != null; e = zip.getNextEntry()) {
        out.put(e.getName(), zip.readAllBytes());
      }
    }
    return out;
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  @Test
  void wheel_holdsModuleMetadataWheelAndRecord() throws Exception {
    Path wheel = TinyWheels.build(dir, "tinypkg", "1.0", null, List.of("tinydep>=1.0"));
    assertThat(wheel.getFileName().toString()).isEqualTo("tinypkg-1.0-py3-none-any.whl");
    Map<String, byte[]> e = entries(wheel);
    assertThat(e.keySet())
        .containsExactly(
            "tinypkg/__init__.py",
            "tinypkg-1.0.dist-info/METADATA",
            "tinypkg-1.0.dist-info/WHEEL",
            "tinypkg-1.0.dist-info/RECORD");
    assertThat(text(e.get("tinypkg/__init__.py")))
        .contains("__version__ = \"1.0\"")
        .contains("def hello():")
        .contains("hello from tinypkg 1.0");
    assertThat(text(e.get("tinypkg-1.0.dist-info/METADATA")))
        .isEqualTo(
            "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\nRequires-Dist: tinydep>=1.0\n");
    assertThat(text(e.get("tinypkg-1.0.dist-info/WHEEL")))
        .contains("Wheel-Version: 1.0\n")
        .contains("Generator: ")
        .contains("Root-Is-Purelib: true\n")
        .contains("Tag: py3-none-any\n");
    List<String> record = text(e.get("tinypkg-1.0.dist-info/RECORD")).lines().toList();
    assertThat(record).hasSize(4).last().isEqualTo("tinypkg-1.0.dist-info/RECORD,,");
    for (String line : record.subList(0, 3)) {
      String[] f = line.split(",");
      byte[] bytes = e.get(f[0]);
      assertThat(f[1]).isEqualTo("sha256=" + TinyWheels.recordHash(bytes)).hasSize(7 + 43);
      assertThat(f[2]).isEqualTo(String.valueOf(bytes.length));
    }
  }

  @Test
  void sameInputs_giveTheSameBytes() throws Exception {
    byte[] first = Files.readAllBytes(TinyWheels.build(dir.resolve("a"), "tinypkg", "1.0"));
    byte[] second = Files.readAllBytes(TinyWheels.build(dir.resolve("b"), "tinypkg", "1.0"));
    assertThat(first).isEqualTo(second);
  }

  @Test
  void namesWithSeparators_areEscapedInFileNames() throws Exception {
    Path wheel = TinyWheels.build(dir, "Tiny-Pkg.x", "2.0", "X = 1\n");
    assertThat(wheel.getFileName().toString()).isEqualTo("tiny_pkg_x-2.0-py3-none-any.whl");
    assertThat(entries(wheel))
        .containsKeys("tiny_pkg_x/__init__.py", "tiny_pkg_x-2.0.dist-info/METADATA");
    assertThat(text(entries(wheel).get("tiny_pkg_x/__init__.py"))).isEqualTo("X = 1\n");
    assertThat(text(entries(wheel).get("tiny_pkg_x-2.0.dist-info/METADATA")))
        .contains("Name: Tiny-Pkg.x\n");
    assertThat(TinyWheels.module("Tiny-Pkg.x")).isEqualTo("tiny_pkg_x");
  }

  @Test
  void badNameOrVersion_isRefused() {
    assertThatThrownBy(() -> TinyWheels.build(dir, "../x", "1.0"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> TinyWheels.build(dir, "x", "1.0-x-y"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** Python's zipfile, csv, hashlib and base64 agree with every RECORD line. */
  @Test
  void record_isWhatPythonComputes() throws Exception {
    Path wheel = TinyWheels.build(dir, "tinypkg", "1.0", null, List.of("tinydep"));
    String check =
        """
        import base64, csv, hashlib, io, sys, zipfile
        z = zipfile.ZipFile(sys.argv[1])
        rows = list(csv.reader(io.TextIOWrapper(z.open('tinypkg-1.0.dist-info/RECORD'), 'utf-8')))
        listed = {r[0] for r in rows}
        assert listed == set(z.namelist()), (listed, z.namelist())
        for path, digest, size in rows:
            if path.endswith('/RECORD'):
                assert digest == '' and size == '', (path, digest, size)
                continue
            data = z.read(path)
            algo, value = digest.split('=', 1)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
            assert algo == 'sha256' and value == want and int(size) == len(data), path
        print('ok', len(rows))
        """;
    HostPython.Result r =
        HostPython.run(Duration.ofSeconds(60), null, List.of("-c", check, wheel.toString()));
    assertThat(r.exit()).as(r.describe()).isZero();
    assertThat(r.stdout().strip()).isEqualTo("ok 4");
  }

  @Test
  void pip_installsEachVersionFromAWheelhouseOffline() throws Exception {
    Path wheelhouse = dir.resolve("wheelhouse");
    TinyWheels.build(wheelhouse, "tinypkg", "1.0");
    TinyWheels.build(wheelhouse, "tinypkg", "2.0");
    for (String version : List.of("1.0", "2.0")) {
      Path target = dir.resolve("target-" + version);
      HostPython.Result install =
          HostPython.pipInstall(
              target,
              List.of("--no-index", "--find-links", wheelhouse.toString(), "tinypkg==" + version));
      assertThat(install.exit()).as(install.describe()).isZero();
      HostPython.Result hello = HostPython.hello(target, "tinypkg");
      assertThat(hello.exit()).as(hello.describe()).isZero();
      assertThat(hello.stdout().strip()).isEqualTo(TinyWheels.greeting("tinypkg", version));
      List<String> installed = new ArrayList<>();
      try (var files = Files.list(target)) {
        files.forEach(p -> installed.add(p.getFileName().toString()));
      }
      assertThat(installed).contains("tinypkg", "tinypkg-" + version + ".dist-info");
    }
  }
}
