import type { RedisLink } from "./redis-link.js";

/** One replica as the others see it. */
export interface Member {
  id: string;
  /** Where the others reach it (`http://10.0.0.5:8420`). */
  advertise: string;
  /** A digest of its config (keyed with the cluster secret): replicas that differ are reported. */
  digest: string;
  /** When it started (ms since the epoch). */
  startedAt: number;
}

const PREFIX = "mcplex:replica:";
const SET = "mcplex:replicas";

/**
 * This replica's entry in Redis, refreshed every `heartbeatMs` with a TTL of three heartbeats,
 * and the other replicas as last read (so a Redis outage leaves the last known list).
 */
export class Membership {
  readonly #link: RedisLink;
  readonly #heartbeatMs: number;
  #self: Member;
  #members = new Map<string, Member>();
  /** When each member was last read from Redis (ms). */
  readonly #seen = new Map<string, number>();
  /** This replica has been in the set before: finding it missing means Redis lost its data. */
  #registered = false;
  /** Until when (ms) members missing from a read are kept, after Redis lost its data. */
  #recovering = 0;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;

  constructor(link: RedisLink, self: Member, heartbeatMs: number) {
    this.#link = link;
    this.#self = self;
    this.#heartbeatMs = heartbeatMs;
  }

  get self(): Member {
    return this.#self;
  }

  /** Starts the heartbeat (the first one now). */
  start(): void {
    void this.beat();
    this.#timer = setInterval(() => void this.beat(), this.#heartbeatMs);
    this.#timer.unref();
  }

  /** Changes what this replica announces (a reloaded config's digest); sent at once. */
  update(change: Partial<Omit<Member, "id">>): void {
    this.#self = { ...this.#self, ...change };
    void this.beat();
  }

  /** Registers this replica again and re-reads the others; never rejects. */
  beat(): Promise<void> {
    this.#beating ??= this.#beat().finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }

  async #beat(): Promise<void> {
    if (!this.#link.up) return;
    const { client } = this.#link;
    try {
      await client.set(PREFIX + this.#self.id, JSON.stringify(this.#self), {
        expiration: { type: "PX", value: this.#heartbeatMs * 3 },
      });
      // Added anew after being in it: Redis restarted empty (or was flushed).
      const lost = (await client.sAdd(SET, this.#self.id)) > 0 && this.#registered;
      this.#registered = true;
      const ids = await client.sMembers(SET);
      const values = ids.length === 0 ? [] : await client.mGet(ids.map((id) => PREFIX + id));
      const members = new Map<string, Member>();
      const gone: string[] = [];
      ids.forEach((id, i) => {
        const value = values[i];
        const member = typeof value === "string" ? parseMember(value) : undefined;
        if (member === undefined) gone.push(id);
        else members.set(id, member);
      });
      if (gone.length > 0) await client.sRem(SET, gone);
      // After Redis lost its data the others register again over one heartbeat: until then a
      // member seen within one TTL stays, so that its sessions do not look lost. (One that left
      // or died meanwhile is found out by the request sent to it.) Otherwise the read is the list.
      const now = Date.now();
      for (const id of members.keys()) this.#seen.set(id, now);
      this.#recovering = lost ? now + this.#heartbeatMs * 3 : this.#recovering;
      if (now < this.#recovering) {
        for (const [id, member] of this.#members) {
          if (!members.has(id) && now - (this.#seen.get(id) ?? 0) < this.#heartbeatMs * 3)
            members.set(id, member);
        }
      }
      this.#members = members;
    } catch {
      // Redis went away mid-beat: the link reports it; the last list stands.
    }
  }

  /** Every replica as last read, this one included. */
  members(): Member[] {
    const all = new Map(this.#members);
    all.set(this.#self.id, this.#self);
    return [...all.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * The replica `id` if it is alive as far as is known: from the last list read, else from
   * Redis (a replica that started since).
   */
  async find(id: string): Promise<Member | undefined> {
    if (id === this.#self.id) return this.#self;
    const known = this.#members.get(id);
    // A replica that died since the last read is found out by the request sent to it.
    if (known !== undefined || !this.#link.up) return known;
    try {
      const value = await this.#link.client.get(PREFIX + id);
      const member = typeof value === "string" ? parseMember(value) : undefined;
      if (member === undefined) this.#members.delete(id);
      else this.#members.set(id, member);
      return member;
    } catch {
      return this.#members.get(id);
    }
  }

  /** Leaves the cluster: the entry is removed now rather than left to expire. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beating;
    if (!this.#link.up) return;
    try {
      await this.#link.client.del(PREFIX + this.#self.id);
      await this.#link.client.sRem(SET, this.#self.id);
    } catch {
      // Gone with Redis anyway once its TTL runs out.
    }
  }
}

function parseMember(text: string): Member | undefined {
  try {
    const value = JSON.parse(text) as Partial<Member>;
    if (typeof value.id !== "string" || typeof value.advertise !== "string") return undefined;
    return {
      id: value.id,
      advertise: value.advertise,
      digest: String(value.digest ?? ""),
      startedAt: Number(value.startedAt ?? 0),
    };
  } catch {
    return undefined;
  }
}
