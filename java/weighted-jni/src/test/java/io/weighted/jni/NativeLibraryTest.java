package io.weighted.jni;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading: from the jar, from -Dweighted.jni.library, and the version check. */
class NativeLibraryTest {

  @Test
  void loadsFromTheJarByDefault() throws Exception {
    Engine.libraryVersion();
    assertThat(NativeLibrary.loadedFrom()).isIn("jar:/native/" + NativeLibrary.platform()
        + "/libweightedjni.so", System.getProperty(NativeLibrary.LIBRARY_PROPERTY));
  }

  @Test
  void systemPropertyOverridesThePath(@TempDir Path dir) throws Exception {
    Path lib = dir.resolve("libweightedjni-custom.so");
    try (var in = NativeLibrary.class.getResourceAsStream(
        "/native/" + NativeLibrary.platform() + "/libweightedjni.so")) {
      Files.copy(in, lib);
    }
    assertThat(probe("-D" + NativeLibrary.LIBRARY_PROPERTY + "=" + lib))
        .startsWith("loaded 1.").endsWith(lib.toString());
    assertThat(probe("-D" + NativeLibrary.LIBRARY_PROPERTY + "=" + dir.resolve("missing.so")))
        .startsWith("refused: ").contains("no such file");
  }

  @Test
  void aLibraryOfAnotherMajorVersionIsRefused() {
    assertThat(NativeLibrary.versionProblem("x.so", 10000, 10000, 1)).isNull();
    assertThat(NativeLibrary.versionProblem("x.so", 10203, 10203, 1)).isNull();
    assertThat(NativeLibrary.versionProblem("x.so", 20000, 10000, 1))
        .contains("speaks C ABI 2.0.0").contains("needs major version 1.x");
    assertThat(NativeLibrary.versionProblem("x.so", 10000, 10000, 2)).contains("refusing");
  }

  private static String probe(String property) throws IOException, InterruptedException {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(List.of(java, property, "-cp",
        System.getProperty("java.class.path"), LoaderProbe.class.getName()))
        .redirectErrorStream(true).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
  }
}
