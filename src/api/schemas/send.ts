import { z } from "zod";
import { pubkey, queryInt } from "./common.js";

export const inviteSchema = z.looseObject({
  invite_signer: z.string(),
  invite_pda: z.string(),
  sender: z.string(),
  creation_tx: z.string(),
  deletion_tx: z.string().nullable().optional(),
  receiver: z.string().nullable().optional(),
  mint: z.string(),
  expiry: z.string(),
  creation_time: z.string(),
  deletion_time: z.string().nullable().optional(),
  amount: z.string(),
  action: z.string().optional(),
  confirmed: z.boolean(),
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
