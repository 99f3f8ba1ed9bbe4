package dev.pysandbox.cli;

import dev.pysandbox.api.ApiKeyInfo;
import dev.pysandbox.api.CreatedApiKey;
import dev.pysandbox.api.Json;
import dev.pysandbox.store.ApiKeys;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code pysandbox keys create|list|revoke}: the API keys of the HTTP face. They live in the data
 * directory's database, so a key revoked here is refused by the servers sharing the directory
 * within two seconds.
 */
@Command(
    name = "keys",
    description = "Create, list or revoke the API keys of the HTTP face.",
    subcommands = {
      KeysCommand.CreateKey.class,
      KeysCommand.ListKeys.class,
      KeysCommand.RevokeKey.class
    })
final class KeysCommand extends CommandGroup {
  @Command(
      name = "create",
      description = {
        "Make a key for a tenant. The key alone is printed on stdout, once: it is not stored,"
            + " only its hash is."
      })
  static final class CreateKey extends KeyCommand {
    @Option(
        names = "--tenant",
        required = true,
        paramLabel = "NAME",
        description = "The tenant the key acts for: lowercase letters, digits, '_' and '-'.")
    String tenant;

    @Option(
        names = "--label",
        paramLabel = "TEXT",
        description = "What the key is for (at most 200 characters).")
    String label;

    @Option(
        names = "--role",
        paramLabel = "ROLE",
        defaultValue = "agent",
        description =
            "agent (default: runs code, sessions, files) or approver (may also decide the"
                + " tenant's approvals over REST).")
    String role;

    @Override
    int call(ApiKeys store) {
      CreatedApiKey created = store.create(tenant, label, role);
      // stdout holds the key and nothing else, so that `KEY=$(pysandbox keys create ...)` works.
      System.out.println(created.key());
      System.err.println(
          "pysandbox: key "
              + created.keyId()
              + " for tenant '"
              + tenant
              + "' created; store it now, it is shown once"
              + " (revoke it with: pysandbox keys revoke "
              + created.keyId()
              + ")");
      return 0;
    }
  }

  @Command(
      name = "list",
      description = "List every key, revoked ones too, oldest first (never the keys themselves).")
  static final class ListKeys extends KeyCommand {
    @Option(names = "--json", description = "Print JSON.")
    boolean json;

    @Override
    int call(ApiKeys store) {
      List<ApiKeyInfo> all = store.list();
      if (json) {
        System.out.println(Json.writePretty(all));
        return 0;
      }
      String row = "%-16s  %-20s  %-8s  %-24s  %-24s  %-24s  %s%n";
      System.out.printf(row, "KEY", "TENANT", "ROLE", "CREATED", "LAST USED", "REVOKED", "LABEL");
      for (ApiKeyInfo k : all) {
        System.out.printf(
            row,
            k.keyId(),
            k.tenant(),
            k.role(),
            k.createdAt(),
            dash(k.lastUsedAt()),
            dash(k.revokedAt()),
            // Checked when made; escaped anyway, as it may come from another version.
            k.label() == null ? "" : TerminalText.escape(k.label()));
      }
      System.out.printf("(%d keys)%n", all.size());
      return 0;
    }

    private static String dash(String value) {
      return value == null ? "-" : value;
    }
  }

  @Command(
      name = "revoke",
      description = "Revoke a key: servers sharing this data directory refuse it within 2 s.")
  static final class RevokeKey extends KeyCommand {
    @Parameters(paramLabel = "KEY_ID")
    String keyId;

    @Override
    int call(ApiKeys store) {
      ApiKeyInfo revoked = store.revoke(keyId);
      System.out.println("key " + revoked.keyId() + " revoked at " + revoked.revokedAt());
      return 0;
    }
  }

  /**
   * A subcommand that works on the data directory's API keys alone (no core is opened): the store
   * opened and closed here once, the subcommand says what it does with it.
   */
  abstract static class KeyCommand implements Callable<Integer> {
    @ParentCommand KeysCommand keys;

    @Override
    public final Integer call() {
      try (ApiKeys store = keys.main.openApiKeys()) {
        return call(store);
      }
    }

    /** Does the subcommand's work; its exit code. */
    abstract int call(ApiKeys store);
  }
}
