package dev.pysandbox.api.op;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The result schemas the build derived ({@link ResultSchema#FILE}) are the ones deriving gives. */
@Fast
class ResultSchemaTest {
  @Test
  void theBuiltFile_holdsEveryOperationsResult_asDerivingGivesIt() {
    assertThat(ResultSchema.class.getClassLoader().getResource(ResultSchema.FILE))
        .as("the build writes " + ResultSchema.FILE)
        .isNotNull();
    for (Operation op : Operations.ALL) {
      assertThat(ResultSchema.of(op.result()))
          .as(op.name())
          .isEqualTo(ResultSchema.derive(op.result()))
          .containsKeys("type", "properties", "required");
    }
  }

  @Test
  void aTypeNotInTheFile_isDerived_andNoSchemaCanBeChanged() {
    record Other(String name, long size) {}
    Map<String, Object> other = ResultSchema.of(Other.class);
    assertThat(other.get("properties"))
        .isEqualTo(
            Map.of(
                "name", Map.of("type", java.util.List.of("string", "null")),
                "size", Map.of("type", "integer")));
    Map<String, Object> built = ResultSchema.of(Operations.ALL.get(0).result());
    assertThatThrownBy(() -> built.put("x", 1)).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> other.put("x", 1)).isInstanceOf(UnsupportedOperationException.class);
  }
}
