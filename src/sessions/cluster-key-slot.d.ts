/** Types of `cluster-key-slot` (the CRC16 slot function ioredis itself uses), which ships none. */
declare module "cluster-key-slot" {
  /** The Redis Cluster hash slot of a key, honouring its `{hash tag}`. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
