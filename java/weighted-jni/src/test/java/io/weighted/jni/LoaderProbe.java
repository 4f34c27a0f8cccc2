package io.weighted.jni;

/** Run in a child JVM by NativeLibraryTest: loads the library and prints what happened. */
public final class LoaderProbe {
  private LoaderProbe() {}

  public static void main(String[] args) {
    try {
      System.out.println("loaded " + Engine.libraryVersion() + " from " + NativeLibrary.loadedFrom());
    } catch (UnsatisfiedLinkError e) {
      System.out.println("refused: " + e.getMessage());
    }
  }
}
