package io.stasis.core.spi;

/** A host uid and gid: the one that root inside a sandbox maps to. */
public record FileOwner(int uid, int gid) {
}
