"""The board's operations, shared by every front end: post, close (ack, answer, cancel), read
(open, status, the log by pages, compact), a prompt's text read by its recipient (`body`:
`paneboard read`, which posts `read`), wait and who, each taking a `Context` and returning
msgspec Structs; the view of a board (`view.BoardView`); the recipient's policy over its
prompts (`screen.PolicyScreen`); the lines a person reads for the
results (`text`)."""
