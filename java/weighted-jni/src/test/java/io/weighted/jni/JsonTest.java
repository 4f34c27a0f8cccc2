package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The quoting every module's messages and the actuator's JSON use, read back by the parser. */
class JsonTest {

  @Test
  void quoteEscapesWhatWouldForgeALineOrBreakTheString() {
    String name = "a\"b\\c\nd\re\u0000f\u007fg\u00e9";
    String quoted = Json.quote(name);
    assertThat(quoted).isEqualTo("\"a\\\"b\\\\c\\u000ad\\u000de\\u0000f\\u007fg\u00e9\"");
    assertThat(quoted).doesNotContain("\n", "\r");
    Map<String, Object> back = Json.parseObject("{\"k\":" + quoted + "}");
    assertThat(back.get("k")).isEqualTo(name);
  }
}
