/** The SMTP refusals the listener's handlers answer with. */

/** An error smtp-server answers with its `responseCode` (enhanced status code added by the server). */
export function smtpError(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}

export const noSuchMailbox = () => smtpError(550, "No such mailbox");
export const localError = () => smtpError(451, "Local error in processing, try again later");
