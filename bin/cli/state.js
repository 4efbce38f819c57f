// The CLI's shared state: TOOLNEXUS_STATE (a Redis or Valkey URL), so that `toolnexus auth`
// signs a whole fleet in and `call`, `list`, `read` and `prompt` use its sign-ins.

/** `opts.state` from the environment, or undefined when TOOLNEXUS_STATE is unset. */
export const envState = () => process.env.TOOLNEXUS_STATE || undefined
