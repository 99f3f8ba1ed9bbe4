package dev.pysandbox.e2e;

import dev.pysandbox.Client;
import dev.pysandbox.TestServices;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link McpResourcesContract} over stdio: the real server ({@code bin/pysandbox serve}). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Client
class McpStdioResourcesIT extends McpResourcesContract {
  @TempDir static Path dataDir;
  static McpSyncClient client;
  static final BlockingQueue<McpSchema.ResourceContents> updates = new LinkedBlockingQueue<>();

  @BeforeAll
  static void connect() {
    StdioClientTransport transport =
        new StdioClientTransport(
            ServerParameters.builder(TestServices.launcher().toString())
                .args("serve", "--data-dir", dataDir.toString())
                .build(),
            McpJsonDefaults.getMapper());
    client =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(90))
            .resourcesUpdateConsumer(updates::addAll)
            .build();
    client.initialize();
  }

  @AfterAll
  static void disconnect() {
    if (client != null) {
      client.closeGracefully();
    }
  }

  @Override
  McpSyncClient client() {
    return client;
  }

  @Override
  BlockingQueue<McpSchema.ResourceContents> updates() {
    return updates;
  }
}
