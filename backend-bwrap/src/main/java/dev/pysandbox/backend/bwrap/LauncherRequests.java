package dev.pysandbox.backend.bwrap;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pysandbox.api.Json;

/**
 * The requests {@code launcher.py} reads, one JSON line each: its set-up, and spawn, kill, release
 * and probe. Written here, apart from {@link LauncherClient}'s process and reader thread, so that
 * the protocol's shape is in one place (its other half is launcher.py).
 */
final class LauncherRequests {
  private static final ObjectMapper JSON = Json.mapper();

  private LauncherRequests() {}

  /** The first line: who the server is, the default user, and the stage to mount. */
  static ObjectNode setup(String instanceId, Integer uid, Integer gid, LauncherClient.Stage stage) {
    ObjectNode setup = JSON.createObjectNode();
    setup.put("parent", ProcessHandle.current().pid());
    setup.put("instance", instanceId);
    if (uid != null) {
      setup.put("uid", uid);
      setup.put("gid", gid);
    }
    if (stage != null) {
      ObjectNode s = setup.putObject("stage");
      s.put("source", stage.source().toString());
      s.put("target", stage.target().toString());
    }
    return setup;
  }

  /** The fork of one sandbox ({@link SpawnRequest} says what each part is for). */
  static ObjectNode spawn(SpawnRequest spawn) {
    ObjectNode req = JSON.createObjectNode();
    req.put("op", "spawn");
    req.put("id", spawn.id());
    req.set("argv", JSON.valueToTree(spawn.argv()));
    req.put("socket", spawn.socket().toString());
    req.put("token", spawn.token());
    if (spawn.seccomp() != null) {
      req.put("seccomp", spawn.seccomp().toString());
    }
    spawn.cgroups().forEach(dir -> req.withArray("cgroups").add(dir.toString()));
    ObjectNode limits = req.putObject("rlimits");
    spawn.rlimits().forEach((name, v) -> limits.putArray(name).add(v[0]).add(v[1]));
    if (spawn.user() != null) {
      req.put("uid", spawn.user().uid());
      req.put("gid", spawn.user().gid());
    }
    if (spawn.image() != null) {
      describe(spawn.image(), req.putObject("image"));
    }
    return req;
  }

  static ObjectNode kill(String id) {
    ObjectNode req = JSON.createObjectNode();
    req.put("op", "kill");
    req.put("id", id);
    return req;
  }

  static ObjectNode release(String id, WorkspaceImages.Image image) {
    ObjectNode req = JSON.createObjectNode();
    req.put("op", "release");
    req.put("id", id);
    req.put("host", image.host().toString());
    req.put("stage", image.stage() == null ? null : image.stage().toString());
    req.put("path", image.file().toString());
    return req;
  }

  static ObjectNode probe(WorkspaceImages.Image image) {
    ObjectNode req = JSON.createObjectNode();
    req.put("op", "probe");
    describe(image, req.putObject("image"));
    return req;
  }

  private static void describe(WorkspaceImages.Image image, ObjectNode i) {
    i.put("path", image.file().toString());
    i.put("template", image.template().toString());
    i.put("bytes", image.bytes());
    i.put("inodes", image.inodes());
    i.put("mkfs", image.mkfs().toString());
    i.put("debugfs", image.debugfs().toString());
    i.put("host", image.host().toString());
    i.put("stage", image.stage() == null ? null : image.stage().toString());
  }
}
