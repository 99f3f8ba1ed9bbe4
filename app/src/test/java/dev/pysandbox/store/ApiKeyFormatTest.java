package dev.pysandbox.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Fast;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

@Fast
class ApiKeyFormatTest {
  @Test
  void newKeys_haveTheShape_andDoNotRepeat() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String key = ApiKeyFormat.newKey();
      assertThat(key).matches(ApiKeyFormat.PATTERN).hasSize(47);
      assertThat(ApiKeyFormat.isWellFormed(key)).isTrue();
      assertThat(seen.add(key)).isTrue();
    }
  }

  @Test
  void isWellFormed_agreesWithThePattern() {
    Random random = new Random(42);
    String alphabet = "psk_PSK-=+/ .Az09\u00e9\u0000";
    for (int i = 0; i < 100_000; i++) {
      StringBuilder s = new StringBuilder(random.nextBoolean() ? "psk_" : "");
      int length = random.nextInt(3) == 0 ? 43 + random.nextInt(3) - 1 : random.nextInt(50);
      for (int j = 0; j < length; j++) {
        s.append(
            random.nextInt(4) == 0
                ? alphabet.charAt(random.nextInt(alphabet.length()))
                : (char) ('a' + random.nextInt(26)));
      }
      String candidate = s.toString();
      assertThat(ApiKeyFormat.isWellFormed(candidate))
          .as(candidate)
          .isEqualTo(ApiKeyFormat.PATTERN.matcher(candidate).matches());
    }
    assertThat(ApiKeyFormat.isWellFormed(null)).isFalse();
  }

  @Test
  void hash_isTheHexSha256OfTheWholeKey() {
    // sha256sum of the bytes "psk_abc", computed outside Java
    assertThat(ApiKeyFormat.hash("psk_abc"))
        .isEqualTo("72d88e212e2d566dc81ece10527356dad7f1c13e59dc9555a4a17cc3be14d514");
  }
}
