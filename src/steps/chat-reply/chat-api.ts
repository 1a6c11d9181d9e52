/**
 * What the chat_reply step needs from outside the engine: posting as a workspace's installed
 * bot. Implemented by platform/slack/slack-chat.ts and handed to the engine by the composition
 * root (steps never see the database). Failures are thrown as step errors (engine/step-errors):
 * retryable, non-retryable or retry-after.
 */
export interface ChatApi {
  postMessage(request: ChatPostRequest): Promise<ChatPostResult>;
}

export interface ChatPostRequest {
  workspaceId: string;
  /** The Slack team whose installation posts; null: the workspace's only Slack installation. */
  teamId: string | null;
  /** The installation (its id) that posts, chosen before any team: an approval's `notify.slack.installation_id`. */
  installationId?: string | null;
  channel: string;
  text: string;
  threadTs: string | null;
  signal: AbortSignal;
}

export interface ChatPostResult {
  channel: string;
  ts: string;
  thread_ts: string | null;
  team_id: string;
}
