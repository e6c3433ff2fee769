/**
 * Packets the sandbox filter dropped, as events: the nftables rules log each refused attempt's
 * first packet to an NFLOG group ({@code log prefix "<slot> <rule>" group N}), and
 * {@link io.stasis.network.linux.nflog.NflogReader} reads that group over a netlink socket and
 * hands each drop on as a {@link io.stasis.network.linux.nflog.DroppedPacket}.
 *
 * <p>Decoding ({@code NflogCodec}, {@code DroppedPacket.parse}) is pure functions over byte arrays
 * that fail only with {@link io.stasis.network.linux.nflog.NflogFormatException}; the system calls
 * are all in {@code NetlinkSocket}.
 */
package io.stasis.network.linux.nflog;
