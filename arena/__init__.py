"""Arena: code LLMs compete on real GitHub issues, as submitter and reviewer."""
