mod family;
mod parser_props;
