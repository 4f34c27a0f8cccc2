package io.weighted.jni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Properties;

/**
 * Finds, loads and checks {@code libweightedjni}, and turns status codes into exceptions.
 *
 * <p>Loading follows zstd-jni and RocksDB's {@code NativeLibraryLoader}: the system property
 * {@value #LIBRARY_PROPERTY} names a library file to load as is; otherwise the jar's
 * {@code /native/<os>-<arch>/libweightedjni.so} is extracted to a temporary file whose name
 * carries the version (removed again right after loading: Linux keeps the mapping). After loading,
 * the library's C ABI version ({@code wt_version_number()}) must have the major version this jar
 * was built for and at least the minor version its glue was compiled against, else the load is
 * refused with an {@link UnsatisfiedLinkError} that says so.
 */
final class NativeLibrary {
  /** A path to a libweightedjni file that overrides the one in the jar. */
  static final String LIBRARY_PROPERTY = "weighted.jni.library";
  /** Where the jar's library is extracted (default: java.io.tmpdir). */
  static final String TMPDIR_PROPERTY = "weighted.jni.tmpdir";
  static final String LIBRARY_NAME = "libweightedjni.so";

  private static final Properties BUILD = loadBuildProperties();
  private static volatile boolean loaded;
  private static String loadedFrom;

  private NativeLibrary() {}

  /** Loads the library once; throws UnsatisfiedLinkError with the reason when it cannot. */
  static void ensureLoaded() {
    if (!loaded) {
      load();
    }
  }

  private static synchronized void load() {
    if (loaded) {
      return;
    }
    String override = System.getProperty(LIBRARY_PROPERTY);
    if (override != null && !override.isBlank()) {
      Path p = Paths.get(override).toAbsolutePath();
      if (!Files.isRegularFile(p)) {
        throw new UnsatisfiedLinkError(
            "-D" + LIBRARY_PROPERTY + "=" + override + ": no such file");
      }
      System.load(p.toString());
      loadedFrom = p.toString();
    } else {
      loadFromJar();
    }
    checkVersion();
    loaded = true;
  }

  private static void loadFromJar() {
    String platform = platform();
    String resource = resource(platform);
    try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError("weighted-jni " + jarVersion() + " carries no native library"
            + " for " + platform + " (looked for " + resource + "). Build it with `make build`"
            + " and rebuild the jar, or point -D" + LIBRARY_PROPERTY + " at libweightedjni.so.");
      }
      String tmp = System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir"));
      Path dir = Paths.get(tmp);
      Files.createDirectories(dir);
      Path file = Files.createTempFile(dir, "libweightedjni-" + jarVersion() + "-", ".so");
      try {
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        System.load(file.toAbsolutePath().toString());
        loadedFrom = "jar:" + resource;
      } finally {
        Files.deleteIfExists(file);
      }
    } catch (IOException e) {
      UnsatisfiedLinkError err =
          new UnsatisfiedLinkError("cannot extract " + resource + ": " + e.getMessage());
      err.initCause(e);
      throw err;
    }
  }

  private static void checkVersion() {
    int expectedMajor = Integer.parseInt(BUILD.getProperty("abi.major", "2").trim());
    String problem = versionProblem(loadedFrom, abiVersion0(), headerVersion0(), expectedMajor);
    if (problem != null) {
      throw new UnsatisfiedLinkError(problem);
    }
  }

  /**
   * Why a library of C ABI {@code lib} whose glue was compiled against weighted.h {@code header}
   * is refused, or null: weighted.h's rule ("Compatibility") is the major version this jar was
   * built for, and no older minor version than the glue was compiled against (it may lack what
   * the glue calls).
   */
  static String versionProblem(String from, int lib, int header, int expectedMajor) {
    String why;
    if (lib / 10000 != expectedMajor || header / 10000 != expectedMajor) {
      why = "needs major version " + expectedMajor + ".x";
    } else if (lib / 100 < header / 100) {
      why = "needs the minor version its glue was compiled against, " + format(header)
          + ", or a newer one (the older library may lack what it calls)";
    } else {
      return null;
    }
    return "native library " + from + " speaks C ABI " + format(lib) + " (glue compiled against"
        + " weighted.h " + format(header) + "), but weighted-jni " + jarVersion() + " " + why
        + ": refusing to use it";
  }

  static String format(int v) {
    return (v / 10000) + "." + (v / 100 % 100) + "." + (v % 100);
  }

  /** This JVM's platform: {@code linux-x86_64}, {@code linux-aarch64}, ... */
  static String platform() {
    return platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
  }

  /**
   * The jar's directory name for an {@code os.name} / {@code os.arch} pair. JVMs name one
   * architecture several ways (HotSpot on Linux says {@code amd64} and {@code aarch64}, others
   * {@code x86_64} and {@code arm64}); the directory uses the names of the GNU triplets the
   * libraries are built for.
   */
  static String platform(String osNameProperty, String osArchProperty) {
    String os = osNameProperty.toLowerCase(Locale.ROOT);
    String osName = os.startsWith("linux") ? "linux" : os.startsWith("mac") ? "darwin"
        : os.startsWith("windows") ? "windows" : os.replaceAll("\\W", "");
    String arch = osArchProperty.toLowerCase(Locale.ROOT);
    String archName = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
        : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
    return osName + "-" + archName;
  }

  /** Where the jar keeps the library for {@code platform}. */
  static String resource(String platform) {
    return "/native/" + platform + "/" + LIBRARY_NAME;
  }

  static String jarVersion() {
    return BUILD.getProperty("version", "unknown");
  }

  static String loadedFrom() {
    return loadedFrom;
  }

  private static Properties loadBuildProperties() {
    Properties p = new Properties();
    try (InputStream in = NativeLibrary.class.getResourceAsStream("weighted-jni.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException ignored) {
      // defaults below
    }
    return p;
  }

  /**
   * The one place a status code becomes an exception: OK returns, anything else throws with the
   * engine's thread-local message. Must run on the thread that made the failing call, right after
   * it (wt_last_error() is per thread and per call).
   */
  static void checkCall(int code) {
    if (code != 0) {
      throw WeightedException.of(code, lastError());
    }
  }

  static String lastError() {
    byte[] b = lastError0();
    return b == null ? "" : new String(b, StandardCharsets.UTF_8);
  }

  static byte[] utf8(String s, String what) {
    if (s == null) {
      throw new NullPointerException(what + " is null");
    }
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** UTF-8 for a C string argument (a name, an id, a path): a NUL inside would cut it short. */
  static byte[] cString(String s, String what) {
    byte[] b = utf8(s, what);
    for (byte x : b) {
      if (x == 0) {
        throw new IllegalArgumentException(what + " contains a NUL character");
      }
    }
    return b;
  }

  static String string(byte[] utf8) {
    return utf8 == null ? null : new String(utf8, StandardCharsets.UTF_8);
  }

  // ---- natives: bindings/jni/native_library.cc ----
  static native int abiVersion0();

  static native int headerVersion0();

  static native byte[] lastError0();

  /** {@code wt_status_name}: Status.cName() reads them once. */
  static native byte[] statusName0(int status);

  /** {@code wt_outcome_name}: null for a value that is no outcome. */
  static native byte[] outcomeName0(int outcome);

  /** {@code wt_event_type_name}: null for a value that is no event type. */
  static native byte[] eventTypeName0(int type);

  /** {@code wt_outcome_from_http_status}. */
  static native int outcomeOfHttpStatus0(int httpStatus);
}
