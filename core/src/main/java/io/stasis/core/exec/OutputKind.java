package io.stasis.core.exec;

/** Which output of a process. Named for the wire: {@code stdout}, {@code stderr}. */
public enum OutputKind {
    STDOUT, STDERR;

    public String wireName() {
        return this == STDOUT ? "stdout" : "stderr";
    }
}
