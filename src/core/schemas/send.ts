import { z } from "zod";
import { pubkey, queryInt } from "./common.js";

export const inviteSchema = z.looseObject({
  invite_signer: z.string(),
  invite_pda: z.string(),
  sender: z.string(),
  creation_tx: z.string(),
  deletion_tx: z.string().nullable().optional(),
  receiver: z.string().nullable().optional(),
  mint: z.string().nullable(),
  expiry: z.string(),
  creation_time: z.string(),
  deletion_time: z.string().nullable().optional(),
  amount: z.string(),
  action: z.string().nullable().optional(),
  // A boolean, an integer (0 or 1) or null (api-live).
  confirmed: z.union([z.boolean(), z.number().int(), z.null()]),
});

export const inviteHistoryResponseSchema = z.looseObject({
  invites: z.array(inviteSchema),
  hasMoreData: z.boolean(),
});

export const inviteHistoryParams = z.strictObject({
  address: pubkey,
  page: queryInt.pipe(z.number().min(1, "must be >= 1")).optional(),
});

export type Invite = z.infer<typeof inviteSchema>;
export type InviteHistoryResponse = z.infer<typeof inviteHistoryResponseSchema>;
export type InviteHistoryParams = z.input<typeof inviteHistoryParams>;
