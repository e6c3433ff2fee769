package io.stasis.testkit.fake;

import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.HostNetwork;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link HostNetwork} that only keeps books, verified by {@code HostNetworkSuite}: which
 * sandboxes are open, in which slot, under which policy. Nothing is enforced, so a test asks
 * {@link #policyOf} what a real host would enforce, and {@link #countDenied} stands for a packet
 * the host's filter dropped.
 *
 * <p>Slots are laid out as the Linux adapter lays them out: slot n is the /30 at offset 4n of
 * {@value #RANGE}/16, the gateway first, then the sandbox; the host end is {@code fk<slot>}.
 */
public final class InMemoryHostNetwork implements HostNetwork {
    static final String RANGE = "10.200.0.0";
    private static final int MAX_CAPACITY = 1 << 14; // /30s in a /16

    private final int capacity;
    private final Map<SandboxId, Opened> open = new HashMap<>();

    private record Opened(NetworkAttachment link, EgressPolicy policy, long denied) {
    }

    /** A network of 64 slots. */
    public InMemoryHostNetwork() {
        this(64);
    }

    public InMemoryHostNetwork(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) throw new IllegalArgumentException("capacity must be 1 to " + MAX_CAPACITY + ", was " + capacity);
        this.capacity = capacity;
    }

    @Override
    public NetworkAttachment attachment(int slot) {
        if (slot < 0 || slot >= capacity) throw new IllegalArgumentException("slot " + slot + " outside 0.." + (capacity - 1));
        int base = toInt(RANGE) + slot * 4;
        return new NetworkAttachment(slot, "fk" + slot, toAddress(base + 1), toAddress(base + 2), 30, Optional.empty());
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /** As on Linux: the same link again keeps the slot's denied count; another link is a close and a fresh open. */
    @Override
    public synchronized void open(SandboxId id, NetworkAttachment attachment, EgressPolicy policy) {
        var previous = open.get(id);
        long denied = previous != null && previous.link().equals(attachment) ? previous.denied() : 0;
        open.put(id, new Opened(attachment, policy, denied));
    }

    @Override
    public synchronized void update(SandboxId id, EgressPolicy policy) {
        var current = open.get(id);
        if (current == null) throw new IllegalStateException("no network open for " + id);
        open.put(id, new Opened(current.link(), policy, current.denied()));
    }

    @Override
    public synchronized void close(SandboxId id) {
        open.remove(id);
    }

    @Override
    public synchronized Set<SandboxId> listOpen() {
        return Set.copyOf(open.keySet());
    }

    @Override
    public synchronized long deniedCount(SandboxId id) {
        var current = open.get(id);
        return current == null ? 0 : current.denied();
    }

    /** The policy the host would enforce for {@code id}, if its network is open. */
    public synchronized Optional<EgressPolicy> policyOf(SandboxId id) {
        return Optional.ofNullable(open.get(id)).map(Opened::policy);
    }

    /** The link {@code id} was opened with, if its network is open. */
    public synchronized Optional<NetworkAttachment> attachmentOf(SandboxId id) {
        return Optional.ofNullable(open.get(id)).map(Opened::link);
    }

    /** Counts one connection of {@code id} refused by the host, as the filter's counter would. */
    public synchronized void countDenied(SandboxId id) {
        var current = open.get(id);
        if (current == null) throw new IllegalStateException("no network open for " + id + ": nothing of it can be denied");
        open.put(id, new Opened(current.link(), current.policy(), current.denied() + 1));
    }

    @Override
    public synchronized String toString() {
        return "in-memory host network: " + open.size() + " of " + capacity + " slots open";
    }

    private static int toInt(String address) {
        return ByteBuffer.wrap(InetAddress.ofLiteral(address).getAddress()).getInt();
    }

    private static InetAddress toAddress(int value) {
        try {
            return InetAddress.getByAddress(ByteBuffer.allocate(4).putInt(value).array());
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // four bytes are always an address
        }
    }
}
