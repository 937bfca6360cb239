mod family;
mod parser_props;
mod python_json;
